# mri-fhd-large-nvidia-h200-roofline.gp: rendered by stepwise_report with `gnuplot mri-fhd-large-nvidia-h200-roofline.gp`
set terminal pngcairo size 900,700 noenhanced font "Sans,10"
set output 'mri-fhd-large-nvidia-h200-roofline.png'
set title 'roofline, mri F^H d, problem large, NVIDIA H200'
set logscale xy
set format x '%.0s%c'
set format y '%.0s%c'
set xrange [1.5989203:3715512.1]
set yrange [1.2582639e+11:3.1502811e+14]
set xlabel 'arithmetic intensity (flop per compulsory DRAM byte, log scale)'
set ylabel 'attained (flop/s, log scale)'
set grid
set key bottom right box opaque
plot 'mri-fhd-large-nvidia-h200-roofline-roofs.dat' index 0 using 1:2 with lines lw 2 lc rgb '#444444' title 'DRAM (probe copy) 3.978 TB/s', \
     'mri-fhd-large-nvidia-h200-roofline-roofs.dat' index 1 using 1:2 with lines lw 2 lc rgb '#d62728' title 'FP32 63.60 Tflop/s', \
     'mri-fhd-large-nvidia-h200-roofline.dat' index 0 using 2:3 with points pt 7 ps 1.2 lc rgb '#2b7bba' title 'rungs', \
     '' index 1 using 2:3:1 with labels offset char 1.2,0 left font 'Sans,9' notitle
