# mc-sizes.gp: rendered by stepwise_report with `gnuplot mc-sizes.gp`
set terminal pngcairo size 900,520 noenhanced font "Sans,10"
set output 'mc-sizes.png'
set title 'mc photons/ms against photons'
set xlabel 'photons (log scale)'
set ylabel 'photons/ms (log scale)'
set grid
set key outside right top
set logscale x 10
set format x '%.0s%c'
set logscale y
set format y '%.0s%c'
plot 'mc-sizes.dat' index 0 using 1:2 with linespoints pt 7 ps 0.8 title '01_cpu_omp', \
     'mc-sizes.dat' index 1 using 1:2 with linespoints pt 7 ps 0.8 title '05_gpu_tuned', \
     'mc-sizes.dat' index 2 using 1:2 with linespoints pt 7 ps 0.8 title '06_hybrid'
