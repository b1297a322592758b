# ae-256-large-nvidia-h200-loss.gp: rendered by stepwise_report with `gnuplot ae-256-large-nvidia-h200-loss.gp`
set terminal pngcairo size 900,520 noenhanced font "Sans,10"
set output 'ae-256-large-nvidia-h200-loss.png'
set title 'training loss, batch 256, problem large, NVIDIA H200'
set xlabel 'training step'
set ylabel 'minibatch loss (MSE)'
set grid
set key outside right top
set logscale y
set format y '%.0s%c'
plot 'ae-256-large-nvidia-h200-loss.dat' index 0 using 1:2 with linespoints pt 7 ps 0.8 title '03_gpu_basic', \
     'ae-256-large-nvidia-h200-loss.dat' index 1 using 1:2 with linespoints pt 7 ps 0.8 title '04_tiled_conv', \
     'ae-256-large-nvidia-h200-loss.dat' index 2 using 1:2 with linespoints pt 7 ps 0.8 title '05_gpu_tiled', \
     'ae-256-large-nvidia-h200-loss.dat' index 3 using 1:2 with linespoints pt 7 ps 0.8 title '06_gpu_fused', \
     'ae-256-large-nvidia-h200-loss.dat' index 4 using 1:2 with linespoints pt 7 ps 0.8 title '07_implicit_gemm', \
     'ae-256-large-nvidia-h200-loss.dat' index 5 using 1:2 with linespoints pt 7 ps 0.8 title '08_tf32_mma', \
     'ae-256-large-nvidia-h200-loss.dat' index 6 using 1:2 with linespoints pt 7 ps 0.8 title '09_cp_async', \
     'ae-256-large-nvidia-h200-loss.dat' index 7 using 1:2 with linespoints pt 7 ps 0.8 title '10_bf16 bf16', \
     'ae-256-large-nvidia-h200-loss.dat' index 8 using 1:2 with linespoints pt 7 ps 0.8 title '11_cudnn'
