# ae-64-large-nvidia-h200-roofline.gp: rendered by stepwise_report with `gnuplot ae-64-large-nvidia-h200-roofline.gp`
set terminal pngcairo size 900,700 noenhanced font "Sans,10"
set output 'ae-64-large-nvidia-h200-roofline.png'
set title 'roofline, ae batch 64, problem large, NVIDIA H200'
set lmargin at screen 0.088888889
set rmargin at screen 0.97777778
set tmargin at screen 0.94285714
set bmargin at screen 0.085714286
set logscale xy
set format x '%.0s%c'
set format y '%.0s%c'
set xrange [1.5862287:10146.373]
set yrange [3.4930656e+11:2.5691794e+15]
set xlabel 'arithmetic intensity (flop per compulsory DRAM byte, log scale)'
set ylabel 'attained (flop/s, log scale)'
set grid
set key top left box opaque
set style textbox opaque noborder margins 0.5,0.3
plot 'ae-64-large-nvidia-h200-roofline-roofs.dat' index 0 using 1:2 with lines lw 2 lc rgb '#444444' title 'DRAM (probe copy) 4.009 TB/s', \
     'ae-64-large-nvidia-h200-roofline-roofs.dat' index 1 using 1:2 with lines lw 2 lc rgb '#d62728' title 'FP32 63.59 Tflop/s', \
     'ae-64-large-nvidia-h200-roofline-roofs.dat' index 2 using 1:2 with lines lw 2 lc rgb '#2ca02c' title 'TF32 mma.sync 321.2 Tflop/s', \
     'ae-64-large-nvidia-h200-roofline-roofs.dat' index 3 using 1:2 with lines lw 2 lc rgb '#9467bd' title 'BF16 mma.sync 642.3 Tflop/s', \
     'ae-64-large-nvidia-h200-roofline.dat' index 0 using 2:3 with points pt 7 ps 1.2 lc rgb '#2b7bba' title 'rungs', \
     '' index 1 using 4:5:($6-$4):($3-$5) with vectors nohead lw 1 lc rgb '#8c8c8c' notitle, \
     '' index 1 using 2:3:1 with labels left boxed font 'Sans,9' notitle
