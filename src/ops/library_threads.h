// The thread count of the libraries the baselines call: OpenMP's (oneDNN and the OpenMP loops use
// it) and OpenBLAS's own pool, set together. oneMKL takes its count per call (mkl_runtime.h).
#pragma once

namespace kbench::ops {

void set_library_threads(int threads);

// Sets the count for a scope and restores the previous counts when the scope ends.
class LibraryThreads {
 public:
  explicit LibraryThreads(int threads);
  ~LibraryThreads();
  LibraryThreads(const LibraryThreads&) = delete;
  LibraryThreads& operator=(const LibraryThreads&) = delete;

 private:
  int saved_omp_;
  int saved_blas_;
};

}  // namespace kbench::ops
