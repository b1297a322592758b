# epic-large-128-nvidia-h200-sky.gp: rendered by stepwise_report with `gnuplot epic-large-128-nvidia-h200-sky.gp`
set terminal pngcairo size 760,680 noenhanced font "Sans,10"
set output 'epic-large-128-nvidia-h200-sky.png'
set title 'sky, total intensity over the band: 10_cluster_128, problem large-128, NVIDIA H200'
set size ratio -1
set xrange [-0.5:127.5]
set yrange [-0.5:127.5]
set xlabel 'l (pixel)'
set ylabel 'm (pixel)'
set cblabel 'intensity / peak'
set palette defined (0 'black', 0.3 '#3b0f70', 0.6 '#de4968', 1 '#fcfdbf')
set key bottom right box opaque
plot 'epic-large-128-nvidia-h200-sky.dat' matrix with image notitle, \
     'epic-large-128-nvidia-h200-sky-sources.dat' using 1:2 with points pt 6 ps 2.5 lw 2 lc rgb '#00e5ff' title 'simulated sources', \
     '' using 1:2:3 with labels offset char 0,1.6 tc rgb '#00e5ff' font 'Sans,9' notitle
