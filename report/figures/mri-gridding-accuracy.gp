# mri-gridding-accuracy.gp: rendered by stepwise_report with `gnuplot mri-gridding-accuracy.gp`
set terminal pngcairo size 900,520 noenhanced font "Sans,10"
set output 'mri-gridding-accuracy.png'
set title 'gridding F^H d against the direct sum'
set xlabel 'kernel width W (grid cells)'
set ylabel 'relative L2 error'
set grid
set key outside right top
set logscale y
set format y '%.0s%c'
plot 'mri-gridding-accuracy.dat' index 0 using 1:2 with linespoints pt 7 ps 0.8 title 'sigma 1.25 (small)', \
     'mri-gridding-accuracy.dat' index 1 using 1:2 with linespoints pt 7 ps 0.8 title 'sigma 1.5 (small)', \
     'mri-gridding-accuracy.dat' index 2 using 1:2 with linespoints pt 7 ps 0.8 title 'sigma 2 (small)'
