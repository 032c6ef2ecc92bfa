// Beam search after Autocomp: phase 1 refines a few independent chains until one is correct;
// phase 2 gives every kernel of the beam several plans (a strategy drawn from the optimization menu
// after random dropout of its entries) and every plan several implementations, and a child joins
// the beam only by beating its parent.
#include <algorithm>
#include <random>

#include "agents/methods.h"
#include "core/sha256.h"

namespace kbench::agents {
namespace {

// The menu with each entry dropped at `dropout`, so that plans explore beyond the first entries
// the model would favour; never empty while the menu is not.
std::vector<std::string> thinned_menu(const std::vector<std::string>& menu, double dropout,
                                      std::mt19937_64& rng) {
  std::vector<std::string> kept;
  std::bernoulli_distribution keep(1 - dropout);
  for (const std::string& entry : menu)
    if (keep(rng)) kept.push_back(entry);
  if (kept.empty() && !menu.empty())
    kept.push_back(menu[std::uniform_int_distribution<std::size_t>(0, menu.size() - 1)(rng)]);
  return kept;
}

std::uint64_t workload_seed(std::uint64_t seed, const TaskDescription& task) {
  const std::string digest = sha256_hex(std::string(task.workload->name));
  return seed ^ std::stoull(digest.substr(0, 15), nullptr, 16);
}

bool faster(const Attempt& a, const Attempt& b) {
  return a.speedup_or_zero() > b.speedup_or_zero();
}

}  // namespace

void run_beam(AgentDriver& driver, const TaskDescription& task, const MethodSettings& settings) {
  std::mt19937_64 rng(workload_seed(settings.seed, task));
  int next_index = 0, round = 0;
  const auto remaining = [&]() { return settings.samples - next_index; };
  const auto draft = [&](ChatRequest request, const std::string& phase) {
    Draft d = seeded_draft(settings, next_index++, round, std::move(request));
    d.phase = phase;
    return d;
  };

  // Phase 1: `beam_width` chains, each refined from its own last attempt, until one is correct.
  std::vector<Attempt> chains, beam;
  while (remaining() > 0 && beam.empty()) {
    std::vector<Draft> drafts;
    const int width = std::min(settings.beam_width, remaining());
    for (int c = 0; c < width; ++c) {
      if (chains.empty()) {
        drafts.push_back(draft(first_request(task), "correctness"));
      } else {
        const Attempt& last = chains[static_cast<std::size_t>(c) % chains.size()];
        Draft d = draft(refinement_of(task, last, next_step_instruction(last)), "correctness");
        d.parent = last.sample.index;
        drafts.push_back(std::move(d));
      }
    }
    chains = driver.run(std::move(drafts));
    for (const Attempt& a : chains)
      if (a.correct()) beam.push_back(a);
    ++round;
  }
  std::sort(beam.begin(), beam.end(), faster);
  if (beam.size() > static_cast<std::size_t>(settings.beam_width))
    beam.resize(static_cast<std::size_t>(settings.beam_width));

  // Phase 2: plans x implementations per parent; children survive only by beating their parent.
  while (remaining() > 0 && !beam.empty()) {
    std::vector<Draft> drafts;
    std::vector<std::size_t> parent_of;  // beam position of each draft's parent
    for (std::size_t p = 0; p < beam.size() && remaining() > 0; ++p) {
      std::vector<std::string> menu = thinned_menu(settings.menu, settings.menu_dropout, rng);
      std::shuffle(menu.begin(), menu.end(), rng);
      for (int plan = 0; plan < settings.plans && remaining() > 0; ++plan) {
        const std::string strategy = menu.empty()
                                         ? "any optimization the figures suggest"
                                         : menu[static_cast<std::size_t>(plan) % menu.size()];
        for (int impl = 0; impl < settings.implementations && remaining() > 0; ++impl) {
          Draft d = draft(refinement_of(task, beam[p],
                                        "It is correct. Make it faster by applying this "
                                        "optimization: " +
                                            strategy + ". Keep it correct."),
                          "optimization");
          d.parent = beam[p].sample.index;
          d.plan = strategy;
          drafts.push_back(std::move(d));
          parent_of.push_back(p);
        }
      }
    }
    const std::vector<Attempt> children = driver.run(std::move(drafts));
    std::vector<Attempt> next;
    std::vector<bool> improved(beam.size(), false);
    for (std::size_t c = 0; c < children.size(); ++c) {
      const Attempt& parent = beam[parent_of[c]];
      if (children[c].correct() && children[c].speedup_or_zero() > parent.speedup_or_zero()) {
        next.push_back(children[c]);
        improved[parent_of[c]] = true;
      }
    }
    for (std::size_t p = 0; p < beam.size(); ++p)
      if (!improved[p]) next.push_back(beam[p]);
    std::stable_sort(next.begin(), next.end(), faster);
    if (next.size() > static_cast<std::size_t>(settings.beam_width))
      next.resize(static_cast<std::size_t>(settings.beam_width));
    beam = std::move(next);
    ++round;
  }
}

}  // namespace kbench::agents
