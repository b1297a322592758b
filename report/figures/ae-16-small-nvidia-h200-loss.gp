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
     'ae-16-small-nvidia-h200-loss.dat' index 3 using 1:2 with linespoints pt 7 ps 0.8 title '03_cpu_blocked', \
     'ae-16-small-nvidia-h200-loss.dat' index 4 using 1:2 with linespoints pt 7 ps 0.8 title '04_gpu_basic', \
     'ae-16-small-nvidia-h200-loss.dat' index 5 using 1:2 with linespoints pt 7 ps 0.8 title '05_tiled_conv', \
     'ae-16-small-nvidia-h200-loss.dat' index 6 using 1:2 with linespoints pt 7 ps 0.8 title '06_staged_gradient', \
     'ae-16-small-nvidia-h200-loss.dat' index 7 using 1:2 with linespoints pt 7 ps 0.8 title '07_loss_block_sums', \
     'ae-16-small-nvidia-h200-loss.dat' index 8 using 1:2 with linespoints pt 7 ps 0.8 title '08_nhwc', \
     'ae-16-small-nvidia-h200-loss.dat' index 9 using 1:2 with linespoints pt 7 ps 0.8 title '09_conv_gemm', \
     'ae-16-small-nvidia-h200-loss.dat' index 10 using 1:2 with linespoints pt 7 ps 0.8 title '10_weight_gemm', \
     'ae-16-small-nvidia-h200-loss.dat' index 11 using 1:2 with linespoints pt 7 ps 0.8 title '11_gemm_tiles', \
     'ae-16-small-nvidia-h200-loss.dat' index 12 using 1:2 with linespoints pt 7 ps 0.8 title '12_tf32_mma', \
     'ae-16-small-nvidia-h200-loss.dat' index 13 using 1:2 with linespoints pt 7 ps 0.8 title '13_cp_async', \
     'ae-16-small-nvidia-h200-loss.dat' index 14 using 1:2 with linespoints pt 7 ps 0.8 title '14_bf16 bf16', \
     'ae-16-small-nvidia-h200-loss.dat' index 15 using 1:2 with linespoints pt 7 ps 0.8 title '15_cudnn', \
     'ae-16-small-nvidia-h200-loss.dat' index 16 using 1:2 with linespoints pt 7 ps 0.8 title '16_fused_forward', \
     'ae-16-small-nvidia-h200-loss.dat' index 17 using 1:2 with linespoints pt 7 ps 0.8 title '17_fused_backward', \
     'ae-16-small-nvidia-h200-loss.dat' index 18 using 1:2 with linespoints pt 7 ps 0.8 title '18_upsampled_reads', \
     'ae-16-small-nvidia-h200-loss.dat' index 19 using 1:2 with linespoints pt 7 ps 0.8 title '19_sgd_arranged', \
     'ae-16-small-nvidia-h200-loss.dat' index 20 using 1:2 with linespoints pt 7 ps 0.8 title '20_cuda_graph', \
     'ae-16-small-nvidia-h200-loss.dat' index 21 using 1:2 with linespoints pt 7 ps 0.8 title '21_direct_conv5 bf16', \
     'ae-16-small-nvidia-h200-loss.dat' index 22 using 1:2 with linespoints pt 7 ps 0.8 title '22_whole_waves bf16', \
     'ae-16-small-nvidia-h200-loss.dat' index 23 using 1:2 with linespoints pt 7 ps 0.8 title '23_pooled_epilogue bf16', \
     'ae-16-small-nvidia-h200-loss.dat' index 24 using 1:2 with linespoints pt 7 ps 0.8 title '24_data_parallel bf16'
