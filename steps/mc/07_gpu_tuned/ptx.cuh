// w f rounded to nearest (f in units of 2^-32): the high word of w f + 2^31, written so that it
// is one IMAD.HI (the plain C++ costs three).
__device__ unsigned scaled(unsigned weight, unsigned factor) {
  unsigned product;
  asm("{\n\t.reg .u32 low;\n\t"
      "mad.lo.cc.u32 low, %1, %2, 0x80000000;\n\t"
      "madc.hi.u32 %0, %1, %2, 0;\n\t"
      "}"
      : "=r"(product)
      : "r"(weight), "r"(factor));
  return product;
}
