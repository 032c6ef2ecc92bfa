#include "ops/library_threads.h"

#include <cblas.h>
#include <omp.h>

namespace kbench::ops {

void set_library_threads(int threads) {
  omp_set_num_threads(threads);
  openblas_set_num_threads(threads);
}

LibraryThreads::LibraryThreads(int threads)
    : saved_omp_(omp_get_max_threads()), saved_blas_(openblas_get_num_threads()) {
  set_library_threads(threads);
}

LibraryThreads::~LibraryThreads() {
  omp_set_num_threads(saved_omp_);
  openblas_set_num_threads(saved_blas_);
}

}  // namespace kbench::ops
