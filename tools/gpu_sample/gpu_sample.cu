// The CUDA sample workload for jobs on GPU nodes: prints the UUIDs of the GPUs the process sees
// (what CUDA_VISIBLE_DEVICES left it) and runs a small kernel on each, checking the result.
// Exit 0: every visible GPU computed correctly; 77: no GPU visible (prints SKIPPED); 1: failure.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

__global__ void saxpy(int n, float a, const float* x, float* y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

void print_uuid(const cudaUUID_t& uuid) {
    const unsigned char* b = reinterpret_cast<const unsigned char*>(uuid.bytes);
    std::printf("GPU-");
    for (int i = 0; i < 16; ++i) {
        std::printf("%02x", b[i]);
        if (i == 3 || i == 5 || i == 7 || i == 9) std::printf("-");
    }
}

bool check(cudaError_t e, const char* what) {
    if (e == cudaSuccess) return true;
    std::printf("%s: %s\n", what, cudaGetErrorString(e));
    return false;
}

bool run_kernel(int device) {
    const int n = 1 << 20;
    std::vector<float> x(n, 1.0f), y(n, 2.0f);
    float *dx = nullptr, *dy = nullptr;
    bool ok = check(cudaSetDevice(device), "cudaSetDevice") && check(cudaMalloc(&dx, n * sizeof(float)), "cudaMalloc") &&
              check(cudaMalloc(&dy, n * sizeof(float)), "cudaMalloc") &&
              check(cudaMemcpy(dx, x.data(), n * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy") &&
              check(cudaMemcpy(dy, y.data(), n * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy");
    if (ok) {
        saxpy<<<(n + 255) / 256, 256>>>(n, 3.0f, dx, dy);
        ok = check(cudaGetLastError(), "launch") && check(cudaDeviceSynchronize(), "kernel") &&
             check(cudaMemcpy(y.data(), dy, n * sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy");
    }
    cudaFree(dx);
    cudaFree(dy);
    if (!ok) return false;
    for (int i = 0; i < n; ++i) {
        if (y[i] != 5.0f) {
            std::printf("device %d: y[%d] = %f, expected 5\n", device, i, y[i]);
            return false;
        }
    }
    return true;
}

}  // namespace

int main() {
    const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
    std::printf("CUDA_VISIBLE_DEVICES=%s\n", visible ? visible : "(unset)");
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
        std::printf("SKIPPED: no CUDA device visible (%s)\n", e == cudaSuccess ? "0 devices" : cudaGetErrorString(e));
        return 77;
    }
    bool all_ok = true;
    for (int d = 0; d < count; ++d) {
        cudaDeviceProp props{};
        if (!check(cudaGetDeviceProperties(&props, d), "cudaGetDeviceProperties")) return 1;
        std::printf("device %d: ", d);
        print_uuid(props.uuid);
        std::printf(" %s\n", props.name);
        bool ok = run_kernel(d);
        std::printf("device %d: saxpy on 2^20 floats %s\n", d, ok ? "ok" : "FAILED");
        all_ok = all_ok && ok;
    }
    return all_ok ? 0 : 1;
}
