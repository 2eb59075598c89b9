// PMPP 5, tiled matrix multiplication: the CUDA C++ spelling of tiled_matmul_kernel. p = m @ n with
// m rows x inner and n inner x cols, every matrix one flat array, row after row.
#define TILE 8

extern "C" __global__ void tiled_matmul_kernel(float* p, const float* m, const float* n, int rows, int inner,
                                               int cols) {
    int tx = threadIdx.x;
    int ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty;
    int col = blockIdx.x * TILE + tx;
    __shared__ float m_tile[TILE][TILE];
    __shared__ float n_tile[TILE][TILE];
    float acc = 0.0f;
    for (int t = 0; t < (inner + TILE - 1) / TILE; t++) {
        int k = t * TILE + tx;
        m_tile[ty][tx] = (row < rows && k < inner) ? m[row * inner + k] : 0.0f;
        k = t * TILE + ty;
        n_tile[ty][tx] = (k < inner && col < cols) ? n[k * cols + col] : 0.0f;
        __syncthreads();
        for (int kk = 0; kk < TILE; kk++) {
            acc += m_tile[ty][kk] * n_tile[kk][tx];
        }
        __syncthreads();  // nobody overwrites the tiles while a neighbour still reads them
    }
    if (row < rows && col < cols) {
        p[row * cols + col] = acc;
    }
}
