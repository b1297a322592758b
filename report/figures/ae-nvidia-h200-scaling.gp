# ae-nvidia-h200-scaling.gp: rendered by stepwise_report with `gnuplot ae-nvidia-h200-scaling.gp`
set terminal pngcairo size 900,560 noenhanced font "Sans,10"
set output 'ae-nvidia-h200-scaling.png'
set title 'scaling, ae, NVIDIA H200'
set xlabel 'GPUs (ranks)'
set ylabel 'speedup over 1 GPU'
set xrange [0.5:4.5]
set yrange [0:4.6019252]
set xtics (1, 2, 4)
set grid
set key top left box opaque
plot 'ae-nvidia-h200-scaling.dat' index 1 using 1:2 with linespoints lw 2 pt 7 ps 1.2 title '24_data_parallel bf16, batch 256, problem large', \
     'ae-nvidia-h200-scaling.dat' index 2 using 1:2 with linespoints lw 2 pt 9 ps 1.2 title 'pytorch bf16_cl, batch 256, problem large', \
     'ae-nvidia-h200-scaling.dat' index 3 using 1:2 with linespoints lw 2 pt 11 ps 1.2 title 'pytorch bf16_cl_compile, batch 256, problem large', \
     'ae-nvidia-h200-scaling.dat' index 0 using 1:2 with lines dt 2 lw 1.5 lc rgb '#222222' title 'ideal (speedup = GPUs)'
