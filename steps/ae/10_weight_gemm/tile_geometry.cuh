__host__ __device__ constexpr int ceil_div(int a, int b) { return (a + b - 1) / b; }
