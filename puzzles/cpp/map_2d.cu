// Puzzle 4, Map 2D, in CUDA C++. C++ has no a[i, j]: a size x size matrix is one flat array, row
// after row, so element (i, j) is a[i * size + j].
extern "C" __global__ void map_2d_kernel(float* out, const float* a, int size) {
    int i = threadIdx.y;  // row
    int j = threadIdx.x;  // column
    // BEGIN SOLUTION
    if (i < size && j < size) {
        out[i * size + j] = a[i * size + j] + 10.0f;
    }
    // END SOLUTION
}
