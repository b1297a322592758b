# epic-small-128-nvidia-h200-speedup.gp: rendered by stepwise_report with `gnuplot epic-small-128-nvidia-h200-speedup.gp`
set terminal pngcairo size 900,480 noenhanced font "Sans,10"
set output 'epic-small-128-nvidia-h200-speedup.png'
set title 'epic problem small-128, NVIDIA H200'
set logscale y
set yrange [0.33333333:458.17115]
set xrange [-0.6:6.6]
set ylabel 'speedup over 00_cpu (log scale)'
set style fill solid 0.85 border -1
set boxwidth 0.7
set grid ytics
set key top left reverse Left
set xtics rotate by -30 left
set arrow from graph 0, first 1 to graph 1, first 1 nohead dashtype 2 lc rgb "#444444"
plot 'epic-small-128-nvidia-h200-speedup.dat' using 0:($3 == 0 ? $2 : NaN):xtic(1) with boxes lc rgb "#8c8c8c" title "CPU", \
     '' using 0:($3 == 1 ? $2 : NaN) with boxes lc rgb "#2b7bba" title "GPU", \
     '' using 0:2:4 with labels offset 0,0.8 notitle
