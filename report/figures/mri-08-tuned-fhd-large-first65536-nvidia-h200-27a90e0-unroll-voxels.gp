# mri-08-tuned-fhd-large-first65536-nvidia-h200-27a90e0-unroll-voxels.gp: rendered by stepwise_report with `gnuplot mri-08-tuned-fhd-large-first65536-nvidia-h200-27a90e0-unroll-voxels.gp`
set terminal pngcairo size 820,560 noenhanced font "Sans,10"
set output 'mri-08-tuned-fhd-large-first65536-nvidia-h200-27a90e0-unroll-voxels.png'
set title 'tuning 08_tuned, F^H d, problem large-first65536, NVIDIA H200, commit 27a90e0'
set xlabel 'unroll'
set ylabel 'voxels'
set cblabel 'pairs/s (best over other parameters)'
set format cb '%.1s%c'
set xrange [-0.5:4.5]
set yrange [-0.5:1.5]
set xtics ('1' 0, '2' 1, '4' 2, '8' 3, '16' 4)
set ytics ('1' 0, '4' 1)
set palette defined (0 "#f7fbff", 1 "#c6dbef", 2 "#6baed6", 3 "#2171b5")
unset key
plot 'mri-08-tuned-fhd-large-first65536-nvidia-h200-27a90e0-unroll-voxels.dat' using 1:2:(0.5):(0.5):3 with boxxyerror fs solid 1.0 noborder lc palette, \
     '' using 1:2:4 with labels font "Sans,9"
