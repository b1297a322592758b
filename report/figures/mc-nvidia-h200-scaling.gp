# mc-nvidia-h200-scaling.gp: rendered by stepwise_report with `gnuplot mc-nvidia-h200-scaling.gp`
set terminal pngcairo size 900,560 noenhanced font "Sans,10"
set output 'mc-nvidia-h200-scaling.png'
set title 'scaling, mc, NVIDIA H200'
set xlabel 'GPUs (ranks)'
set ylabel 'speedup over 1 GPU'
set xrange [0.5:4.5]
set yrange [0:4.6]
set xtics (1, 2, 4)
set grid
set key top left box opaque
plot 'mc-nvidia-h200-scaling.dat' index 1 using 1:2 with linespoints lw 2 pt 7 ps 1.2 title '13_nccl_photons, problem custom', \
     'mc-nvidia-h200-scaling.dat' index 0 using 1:2 with lines dt 2 lw 1.5 lc rgb '#222222' title 'ideal (speedup = GPUs)'
