// Puzzle 5, Broadcast, in CUDA C++: a is a column (size x 1), b a row (1 x size), so a[i, 0] is a[i]
// and b[0, j] is b[j].
extern "C" __global__ void broadcast_kernel(float* out, const float* a, const float* b, int size) {
    int i = threadIdx.y;  // row
    int j = threadIdx.x;  // column
    // BEGIN SOLUTION
    if (i < size && j < size) {
        out[i * size + j] = a[i] + b[j];
    }
    // END SOLUTION
}
