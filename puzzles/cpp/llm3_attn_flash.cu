// FlashAttention-style forward: the CUDA C++ spelling of attn_flash. q, k, v, out are
// (batch*heads) x T x d, flat; C++ has no .shape, so T and d come as q_dim1 and q_dim2.
#define BR 8      // query rows per block, one thread each
#define BC 4      // keys per K/V tile in shared memory
#define MAX_D 16  // the widest head

extern "C" __global__ void attn_flash(float* out, const float* q, const float* k, const float* v, bool causal,
                                     int q_dim1, int q_dim2) {
    const float NEG_INF = __int_as_float(0xff800000);
    __shared__ float kt[BC][MAX_D];
    __shared__ float vt[BC][MAX_D];
    float qi[MAX_D], acc[MAX_D], sc[BC];
    int T = q_dim1, d = q_dim2;
    int t = threadIdx.x;
    int q0 = blockIdx.x * BR;
    int i = q0 + t;
    long long base = (long long)blockIdx.y * T * d;
    float scale = 1.0f / sqrtf((float)d);
    if (i < T) {
        for (int c = 0; c < d; c++) {
            qi[c] = q[base + i * d + c] * scale;
            acc[c] = 0.0f;
        }
    }
    float m = NEG_INF, lsum = 0.0f;
    int last = causal ? min(T, q0 + BR) : T;
    for (int k0 = 0; k0 < last; k0 += BC) {
        __syncthreads();  // everyone is done with the previous tile
        for (int e = t; e < BC * d; e += BR) {
            int r = e / d, c = e % d;
            if (k0 + r < T) {
                kt[r][c] = k[base + (k0 + r) * d + c];
                vt[r][c] = v[base + (k0 + r) * d + c];
            }
        }
        __syncthreads();  // the tile is complete
        if (i < T) {
            int hi = min(BC, T - k0);
            if (causal) hi = min(hi, i + 1 - k0);
            float m_tile = NEG_INF;
            for (int r = 0; r < hi; r++) {
                float x = 0.0f;
                for (int c = 0; c < d; c++) x += qi[c] * kt[r][c];
                sc[r] = x;
                m_tile = fmaxf(m_tile, x);
            }
            if (hi > 0) {
                float m_new = fmaxf(m, m_tile);
                float alpha = expf(m - m_new);
                lsum *= alpha;
                for (int c = 0; c < d; c++) acc[c] *= alpha;
                for (int r = 0; r < hi; r++) {
                    float p = expf(sc[r] - m_new);
                    lsum += p;
                    for (int c = 0; c < d; c++) acc[c] += p * vt[r][c];
                }
                m = m_new;
            }
        }
    }
    if (i < T) {
        for (int c = 0; c < d; c++) out[base + i * d + c] = acc[c] / lsum;
    }
}
