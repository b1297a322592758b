# mri-recon-large-object-blur1-montage.gp: rendered by stepwise_report with `gnuplot mri-recon-large-object-blur1-montage.gp`
set terminal pngcairo size 900,420 noenhanced font "Sans,10"
set output 'mri-recon-large-object-blur1-montage.png'
set title 'central plane (z = 32)'
set multiplot layout 1,3 title 'central plane (z = 32)'
set size ratio -1
unset xtics
unset ytics
set palette gray
set bmargin 5
set colorbox horizontal user origin graph 0, graph -0.12 size graph 1, graph 0.05
set title 'true image' font 'Sans,9'
set xrange [-0.5:63.5]
set yrange [-0.5:63.5]
set cbrange [0:1.348]
plot 'mri-recon-large-object-blur1-montage-0.dat' matrix with image notitle
set title 'LS, 17/17: 2.50 %, 39.4 dB' font 'Sans,9'
set xrange [-0.5:63.5]
set yrange [-0.5:63.5]
set cbrange [0:1.348]
plot 'mri-recon-large-object-blur1-montage-1.dat' matrix with image notitle
set title '|error| of the LS image to its left' font 'Sans,9'
set xrange [-0.5:63.5]
set yrange [-0.5:63.5]
set cbrange [0:0.118]
plot 'mri-recon-large-object-blur1-montage-2.dat' matrix with image notitle
unset multiplot
