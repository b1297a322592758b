# mc-custom-nvidia-h100-80gb-hbm3-roofline.gp: rendered by stepwise_report with `gnuplot mc-custom-nvidia-h100-80gb-hbm3-roofline.gp`
set terminal pngcairo size 900,700 noenhanced font "Sans,10"
set output 'mc-custom-nvidia-h100-80gb-hbm3-roofline.png'
set title 'roofline, mc problem custom, NVIDIA H100 80GB HBM3'
set logscale xy
set format x '%.0s%c'
set format y '%.0s%c'
set xrange [2.2307036:2.1063381e+11]
set yrange [4.3704778e+12:2.5385787e+14]
set xlabel 'arithmetic intensity (flop per compulsory DRAM byte, log scale)'
set ylabel 'attained (flop/s, log scale)'
set grid
set key bottom right box opaque
plot 'mc-custom-nvidia-h100-80gb-hbm3-roofline-roofs.dat' index 0 using 1:2 with lines lw 2 lc rgb '#444444' title 'DRAM (probe copy) 2.845 TB/s', \
     'mc-custom-nvidia-h100-80gb-hbm3-roofline-roofs.dat' index 1 using 1:2 with lines lw 2 lc rgb '#d62728' title 'FP32 63.46 Tflop/s', \
     'mc-custom-nvidia-h100-80gb-hbm3-roofline.dat' index 0 using 2:3 with points pt 7 ps 1.2 lc rgb '#2b7bba' title 'rungs', \
     '' index 1 using 2:3:1 with labels offset char 1.2,0 left font 'Sans,9' notitle
