__device__ __forceinline__ void dft16(Pair (&v)[16]) {  // two 8-point DFTs and e^{2 pi i k/16}
  Pair e[8], o[8];
#pragma unroll
  for (int n = 0; n < 8; ++n) e[n] = v[2 * n], o[n] = v[2 * n + 1];
  dft8(e);
  dft8(o);
#pragma unroll
  for (int k = 0; k < 8; ++k) {
    // e^{2 pi i k / 16} = e^{2 pi i 8k / 128}: 1 for k = 0, i for k = 4 (no multiply)
    const Pair t = k == 0 ? o[0] : k == 4 ? Pair{__hneg2(o[4].im), o[4].re} : twiddle(o[k], 8 * k);
    v[k] = add(e[k], t), v[k + 8] = sub(e[k], t);
  }
}

// The gather lists, folded, per (channel, part): for each occupied column and each of its 32
// folded cells, the (stand, complex weight) entries, the weight w e^{2 pi i y part / 128} of the
// cell's row y. Column round one gives thread (item, n2) the folded cells y0 = 8 n1 + n2 (n1 <
// 4) of its column; its entries lie in one run, and `ends` holds where each of the 4 cells'
// entries end (16 bits each).
struct Entry {
  int32_t stand;
  float re, im, unused;  // 16 bytes: one load
};
struct FoldedLists {
  std::vector<int32_t> column, occupied;  // (channel, 128) occupied columns first; (channel)
  std::vector<Entry> entry;
  std::vector<int32_t> first;  // (channel, part, occupied column, n2)
  std::vector<uint2> ends;     // (channel, part, occupied column, n2)
};
FoldedLists folded_lists(const Inputs& in) {
  const CellLists cl = make_cell_lists(in);
  const size_t nn = size_t(kN) * kN;
  FoldedLists l;
  occupied_columns_first(cl, in.channels, kN, l.column, l.occupied);  // 07's order: occupied first
  l.first.assign(size_t(in.channels) * kParts * kN * 8, 0);
  l.ends.assign(l.first.size(), make_uint2(0, 0));
  for (int c = 0; c < in.channels; ++c) {
    auto cell = [&](int y, int x) { return size_t(c) * nn + size_t(y) * kN + x; };
    const int occupied = l.occupied[size_t(c)];
    for (int part = 0; part < kParts; ++part)
      for (int ci = 0; ci < occupied; ++ci)
        for (int n2 = 0; n2 < 8; ++n2) {
          const size_t thread = ((size_t(c) * kParts + part) * kN + ci) * 8 + n2;
          const int x = l.column[size_t(c) * kN + ci];
          l.first[thread] = int32_t(l.entry.size());
          uint32_t end[4];
          for (int n1 = 0; n1 < 4; ++n1) {
            for (int y = 8 * n1 + n2; y < kN; y += kRows) {  // the rows folded onto cell 8 n1 + n2
              const std::complex<double> phase = std::polar(1.0, 2 * M_PI * double(y * part) / kN);
              for (int32_t e = cl.start[cell(y, x)]; e < cl.start[cell(y, x) + 1]; ++e) {
                const std::complex<double> w = double(cl.weight[size_t(e)]) * phase;
                l.entry.push_back({cl.stand[size_t(e)], float(w.real()), float(w.imag()), 0.f});
              }
            }
            end[n1] = uint32_t(l.entry.size() - size_t(l.first[thread]));  // <= 4 x 4 x 512 stands
          }
          l.ends[thread] = make_uint2(end[0] | end[1] << 16, end[2] | end[3] << 16);
        }
  }
  if (l.entry.empty()) l.entry.push_back({0, 0.f, 0.f, 0.f});  // never read; keeps the upload non-empty
  return l;
}
