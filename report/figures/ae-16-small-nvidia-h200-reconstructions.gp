# ae-16-small-nvidia-h200-reconstructions.gp: rendered by stepwise_report with `gnuplot ae-16-small-nvidia-h200-reconstructions.gp`
set terminal pngcairo size 1240,374 noenhanced font "Sans,10"
set output 'ae-16-small-nvidia-h200-reconstructions.png'
set title 'inputs (top) and reconstructions (bottom): 24_data_parallel bf16, batch 16, problem small, NVIDIA H200'
set size ratio -1
set xrange [-0.5:269.5]
set yrange [-0.5:65.5]
unset xtics
set ytics ('input' 49.5, 'output' 15.5) scale 0
unset border
unset key
plot 'ae-16-small-nvidia-h200-reconstructions.dat' using 1:2:3:4:5 with rgbimage notitle
