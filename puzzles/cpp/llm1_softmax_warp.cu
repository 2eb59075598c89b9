// Softmax, one warp per row, butterfly shuffles: the CUDA C++ spelling of softmax_warp.
#define WARP 32
#define FULL_MASK 0xffffffffu

extern "C" __global__ void softmax_warp(float* out, const float* x, int rows, int cols) {
    const float NEG_INF = __int_as_float(0xff800000);  // -inf (no <cmath> under NVRTC)
    int lane = threadIdx.x % WARP;
    int r = blockIdx.x * (blockDim.x / WARP) + threadIdx.x / WARP;
    if (r >= rows) return;  // the whole warp leaves together: r is the same for its 32 lanes
    const float* row = x + (long long)r * cols;
    float m = NEG_INF;
    for (int j = lane; j < cols; j += WARP) m = fmaxf(m, row[j]);
    for (int offset = 16; offset > 0; offset /= 2) {
        m = fmaxf(m, __shfl_xor_sync(FULL_MASK, m, offset));  // every lane ends with the maximum
    }
    float s = 0.0f;
    if (m != NEG_INF) {
        for (int j = lane; j < cols; j += WARP) s += expf(row[j] - m);
    }
    for (int offset = 16; offset > 0; offset /= 2) {
        s += __shfl_xor_sync(FULL_MASK, s, offset);
    }
    for (int j = lane; j < cols; j += WARP) {
        out[(long long)r * cols + j] = m != NEG_INF ? expf(row[j] - m) / s : 0.0f;
    }
}
