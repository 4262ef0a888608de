// work_group_probe: what a driver says of a kernel's work-group size (CL_KERNEL_WORK_GROUP_SIZE) against what it
// runs. Three kernels (a scaling, the elementwise template's sigmoid, a scaling with reqd_work_group_size(1024)),
// each built with no option, -cl-nv-verbose (NVIDIA's register count in the build log) and -cl-mad-enable, then
// launched over 2^20 items with local sizes 256, 512 and 1024; prints the enqueue and clFinish codes and the last
// element (2 for the scalings, 0.731059 for the sigmoid: the launch ran and was right). By hand, not built by CMake:
//   gcc -O1 -o wgprobe bench/work_group_probe.c -lOpenCL && ./wgprobe PLATFORM_INDEX
// (On a lent GPU: copy the binary into the bundle, run it with LD_LIBRARY_PATH=dist/lib.)
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static const char* srcs[] = {
 "__kernel void k(__global float* a){ a[get_global_id(0)] *= 2.0f; }",
 "__kernel void k(__global const float* restrict A, __global const float* restrict B, __global float* out) {\n"
 "  const long i = get_global_id(0);\n  if (i >= 1048576L) return;\n"
 "  const float a = A[i];\n  out[i] = 1.0f/(1.0f+exp(-a));\n}\n",
 "__kernel __attribute__((reqd_work_group_size(1024,1,1))) void k(__global float* a){ a[get_global_id(0)] *= 2.0f; }",
};
int main(int argc, char** argv) {
  int pi = argc > 1 ? atoi(argv[1]) : 0;
  cl_platform_id ps[8]; cl_uint np = 0; clGetPlatformIDs(8, ps, &np);
  if (pi >= (int)np) { printf("no platform %d\n", pi); return 1; }
  cl_device_id d; clGetDeviceIDs(ps[pi], CL_DEVICE_TYPE_ALL, 1, &d, NULL);
  char name[256]; clGetDeviceInfo(d, CL_DEVICE_NAME, sizeof name, name, NULL);
  size_t dmax = 0; clGetDeviceInfo(d, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof dmax, &dmax, NULL);
  printf("device %s max_wg %zu\n", name, dmax);
  cl_int e; cl_context c = clCreateContext(NULL, 1, &d, NULL, NULL, &e);
  cl_command_queue q = clCreateCommandQueue(c, d, 0, &e);
  size_t n = 1 << 20;
  cl_mem a = clCreateBuffer(c, CL_MEM_READ_WRITE, n * 4, NULL, &e);
  float* h = calloc(n, 4); for (size_t i = 0; i < n; ++i) h[i] = 1.0f;
  const char* opts[] = {"", "-cl-nv-verbose", "-cl-mad-enable"};
  for (int s = 0; s < 3; ++s) for (int o = 0; o < 3; ++o) {
    cl_program p = clCreateProgramWithSource(c, 1, &srcs[s], NULL, &e);
    e = clBuildProgram(p, 1, &d, opts[o], NULL, NULL);
    char log[8192] = {0}; clGetProgramBuildInfo(p, d, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
    if (e) { printf("src %d opt '%s': build %d %s\n", s, opts[o], e, log); continue; }
    cl_kernel k = clCreateKernel(p, "k", &e);
    size_t kmax = 0, mult = 0; cl_ulong priv = 0;
    clGetKernelWorkGroupInfo(k, d, CL_KERNEL_WORK_GROUP_SIZE, sizeof kmax, &kmax, NULL);
    clGetKernelWorkGroupInfo(k, d, CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE, sizeof mult, &mult, NULL);
    clGetKernelWorkGroupInfo(k, d, CL_KERNEL_PRIVATE_MEM_SIZE, sizeof priv, &priv, NULL);
    printf("src %d opt '%s': kernel_wg %zu multiple %zu private %llu log[%s]\n", s, opts[o], kmax, mult,
           (unsigned long long)priv, log);
    clSetKernelArg(k, 0, sizeof a, &a); clSetKernelArg(k, 1, sizeof a, &a); clSetKernelArg(k, 2, sizeof a, &a);
    size_t locs[] = {256, 512, 1024};
    for (int l = 0; l < 3; ++l) {
      clEnqueueWriteBuffer(q, a, CL_TRUE, 0, n * 4, h, 0, NULL, NULL);
      cl_int en = clEnqueueNDRangeKernel(q, k, 1, NULL, &n, &locs[l], 0, NULL, NULL);
      cl_int fin = clFinish(q);
      float back[4] = {0}; clEnqueueReadBuffer(q, a, CL_TRUE, (n - 4) * 4, 16, back, 0, NULL, NULL);
      printf("   local %zu: enqueue %d finish %d last %g\n", locs[l], en, fin, back[3]);
    }
    clReleaseKernel(k); clReleaseProgram(p);
  }
  return 0;
}
