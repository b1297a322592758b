# mc-small-nvidia-h200-heat-profile.gp: rendered by stepwise_report with `gnuplot mc-small-nvidia-h200-heat-profile.gp`
set terminal pngcairo size 900,680 noenhanced font "Sans,10"
set output 'mc-small-nvidia-h200-heat-profile.png'
set title 'heat profile, 13_nccl_photons, problem small, NVIDIA H200'
set xrange [0:5.02475]
set lmargin 12
set multiplot
set size 1, 0.68
set origin 0, 0.32
set bmargin 0
set format x ''
set ylabel 'heat (W/cm^3, log scale)'
set logscale y
set grid
set key top right
plot 'mc-small-nvidia-h200-heat-profile.dat' using 1:4 with lines lw 2 lc rgb '#d62728' title 'exact transport solution', \
     'mc-small-nvidia-h200-heat-profile.dat' using 1:2:3 with yerrorbars pt 7 ps 0.6 lc rgb '#2b7bba' title 'Monte Carlo (1 standard error)'
unset title
set size 1, 0.32
set origin 0, 0
set tmargin 0
set bmargin 3.5
set format x '% g'
unset logscale y
set yrange [-3.45:3.45]
set ytics (-2, 0, 2)
set xlabel 'radius r (mm)'
set ylabel '(MC - exact) / s.e.'
unset key
plot 'mc-small-nvidia-h200-heat-profile.dat' using 1:5 with impulses lw 2 lc rgb '#2b7bba', 0 lc rgb '#444444' notitle
unset multiplot
