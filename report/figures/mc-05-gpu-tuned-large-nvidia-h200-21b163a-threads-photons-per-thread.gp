# mc-05-gpu-tuned-large-nvidia-h200-21b163a-threads-photons-per-thread.gp: rendered by stepwise_report with `gnuplot mc-05-gpu-tuned-large-nvidia-h200-21b163a-threads-photons-per-thread.gp`
set terminal pngcairo size 820,560 noenhanced font "Sans,10"
set output 'mc-05-gpu-tuned-large-nvidia-h200-21b163a-threads-photons-per-thread.png'
set title 'tuning 05_gpu_tuned, problem large, NVIDIA H200, commit 21b163a'
set xlabel 'threads'
set ylabel 'photons-per-thread'
set cblabel 'photons/ms (best over other parameters)'
set format cb '%.1s%c'
set xrange [-0.5:4.5]
set yrange [-0.5:11.5]
set xtics ('32' 0, '64' 1, '128' 2, '256' 3, '512' 4)
set ytics ('1' 0, '2' 1, '4' 2, '8' 3, '16' 4, '32' 5, '64' 6, '128' 7, '256' 8, '512' 9, '1024' 10, '2048' 11)
set palette defined (0 "#f7fbff", 1 "#c6dbef", 2 "#6baed6", 3 "#2171b5")
unset key
plot 'mc-05-gpu-tuned-large-nvidia-h200-21b163a-threads-photons-per-thread.dat' using 1:2:(0.5):(0.5):3 with boxxyerror fs solid 1.0 noborder lc palette, \
     '' using 1:2:4 with labels font "Sans,9"
