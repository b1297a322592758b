__host__ __device__ constexpr int ceil_div(int a, int b) { return (a + b - 1) / b; }

// Without opting in, a block may have 48 KB of shared memory; every tile below stays under it.
constexpr size_t kSharedLimit = 48 * 1024;
