# ae-16-small-nvidia-h200-loss.gp: rendered by stepwise_report with `gnuplot ae-16-small-nvidia-h200-loss.gp`
set terminal pngcairo size 900,520 noenhanced font "Sans,10"
set output 'ae-16-small-nvidia-h200-loss.png'
set title 'training loss, batch 16, problem small, NVIDIA H200'
set xlabel 'training step'
set ylabel 'minibatch loss (MSE)'
set grid
set key outside right top
set logscale y
set format y '%.0s%c'
plot 'ae-16-small-nvidia-h200-loss.dat' index 0 using 1:2 with linespoints pt 7 ps 0.8 title '00_cpu', \
     'ae-16-small-nvidia-h200-loss.dat' index 1 using 1:2 with linespoints pt 7 ps 0.8 title '01_cpu_omp', \
     'ae-16-small-nvidia-h200-loss.dat' index 2 using 1:2 with linespoints pt 7 ps 0.8 title '02_cpu_im2col', \
     'ae-16-small-nvidia-h200-loss.dat' index 3 using 1:2 with linespoints pt 7 ps 0.8 title '03_gpu_basic', \
     'ae-16-small-nvidia-h200-loss.dat' index 4 using 1:2 with linespoints pt 7 ps 0.8 title '04_tiled_conv', \
     'ae-16-small-nvidia-h200-loss.dat' index 5 using 1:2 with linespoints pt 7 ps 0.8 title '05_gpu_tiled', \
     'ae-16-small-nvidia-h200-loss.dat' index 6 using 1:2 with linespoints pt 7 ps 0.8 title '06_gpu_fused', \
     'ae-16-small-nvidia-h200-loss.dat' index 7 using 1:2 with linespoints pt 7 ps 0.8 title '07_implicit_gemm', \
     'ae-16-small-nvidia-h200-loss.dat' index 8 using 1:2 with linespoints pt 7 ps 0.8 title '08_tf32_mma', \
     'ae-16-small-nvidia-h200-loss.dat' index 9 using 1:2 with linespoints pt 7 ps 0.8 title '09_cp_async', \
     'ae-16-small-nvidia-h200-loss.dat' index 10 using 1:2 with linespoints pt 7 ps 0.8 title '10_bf16 bf16', \
     'ae-16-small-nvidia-h200-loss.dat' index 11 using 1:2 with linespoints pt 7 ps 0.8 title '11_cudnn'
