constexpr int kN = 64;              // the image this step makes: 64 x 64 (128 x 128 is 10's and 11's)
constexpr int kThreads = 512;       // 16 warps: 4 row tiles of 16 image rows x 4 groups
