# mri-08-tuned-fhd-large-first65536-nvidia-h200-27a90e0-chunk.gp: rendered by stepwise_report with `gnuplot mri-08-tuned-fhd-large-first65536-nvidia-h200-27a90e0-chunk.gp`
set terminal pngcairo size 900,520 noenhanced font "Sans,10"
set output 'mri-08-tuned-fhd-large-first65536-nvidia-h200-27a90e0-chunk.png'
set title 'runtime vs samples per launch, 08_tuned, F^H d, problem large-first65536, NVIDIA H200, commit 27a90e0'
set xlabel 'k-space samples per launch (chunk)'
set ylabel 'kernel time (ms), best over the other parameters'
set grid
set key outside right top
set logscale x 2
plot 'mri-08-tuned-fhd-large-first65536-nvidia-h200-27a90e0-chunk.dat' index 0 using 1:2 with linespoints pt 7 ps 0.8 title 'threads 32', \
     'mri-08-tuned-fhd-large-first65536-nvidia-h200-27a90e0-chunk.dat' index 1 using 1:2 with linespoints pt 7 ps 0.8 title 'threads 64', \
     'mri-08-tuned-fhd-large-first65536-nvidia-h200-27a90e0-chunk.dat' index 2 using 1:2 with linespoints pt 7 ps 0.8 title 'threads 128', \
     'mri-08-tuned-fhd-large-first65536-nvidia-h200-27a90e0-chunk.dat' index 3 using 1:2 with linespoints pt 7 ps 0.8 title 'threads 256', \
     'mri-08-tuned-fhd-large-first65536-nvidia-h200-27a90e0-chunk.dat' index 4 using 1:2 with linespoints pt 7 ps 0.8 title 'threads 512', \
     'mri-08-tuned-fhd-large-first65536-nvidia-h200-27a90e0-chunk.dat' index 5 using 1:2 with linespoints pt 7 ps 0.8 title 'threads 1024'
