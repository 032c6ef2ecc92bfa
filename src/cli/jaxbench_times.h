// The original's XLA time on a TPU v6e, per workload, as JAXBench reports it
// (../shared/spec/workloads.json, `tpu_v6e_xla_baseline_ms`): context for the CPU numbers of
// docs/baselines.md, never a bar kbench measures against.
#pragma once

#include <optional>
#include <string_view>

namespace kbench::cli {

struct TpuTime {
  std::string_view id;
  double xla_ms;
};

inline constexpr TpuTime kJaxbenchTpuV6eXlaMs[] = {
    {"1p", 22.9762},  {"2p", 50.3364},  {"3p", 19.8843},  {"4p", 5.6623},  {"5p", 37.1101},
    {"6p", 7.7828},   {"7p", 48.4853},  {"8p", 5.3218},   {"9p", 16.4977}, {"10p", 30.7251},
    {"11p", 3.0404},  {"12p", 1.1385},  {"13p", 14.2096}, {"14p", 1.2445}, {"15p", 12.2},
    {"16p", 28.2603}, {"17p", 14.5211}, {"18k", 1.7671},  {"19k", 0.6297}, {"20k", 0.6337},
    {"21k", 0.6788},  {"22k", 2.8542},  {"23k", 0.7273},  {"24k", 0.7905}, {"25k", 0.3383},
    {"26k", 0.6856},  {"27k", 0.7829},  {"28k", 14.7864}, {"29k", 1.1193}, {"30k", 0.644},
    {"31k", 3.7396},  {"32k", 0.5503},  {"33k", 2.4173},  {"34k", 1.5584}, {"35k", 0.6636},
    {"36k", 0.7202},  {"37k", 0.6426},  {"38k", 0.8448},  {"39k", 1.3322}, {"40k", 1.417},
    {"41k", 0.6292},  {"42k", 0.6274},  {"43k", 0.9111},  {"44k", 0.6599}, {"45k", 1.4063},
    {"46k", 1.011},   {"47k", 0.695},   {"48k", 0.6642},  {"49k", 0.8563}, {"50k", 0.8537},
};

inline std::optional<double> tpu_v6e_xla_ms(std::string_view id) {
  for (const TpuTime& t : kJaxbenchTpuV6eXlaMs)
    if (t.id == id) return t.xla_ms;
  return std::nullopt;
}

}  // namespace kbench::cli
