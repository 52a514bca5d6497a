// Compact observations (Hello.compact_observations) made complete again, one stream's worth.
#pragma once

#include <optional>
#include <stdexcept>

#include "tavolo/turn.hpp"

namespace tavolo {

// The referee broke the rules of compact observations.
class CompactError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// An observation with `compact` true holds in `tricks`, `declarations`, `draws` and
// `calabresella.bids` only the items added since the previous request of the stream, of
// the same game and deal; one with `compact` false is complete. One per stream: run()
// keeps one for each of its streams, so a bot sees complete observations only.
class CompactMerger {
 public:
  // Forget the previous observation: a new call to the referee starts afresh.
  void reset() { previous_.reset(); }
  // Make `observation` the complete one it stands for (`compact` false), and remember it.
  // Throws CompactError if it is compact and follows no observation of its game and deal.
  void complete(Observation& observation);

 private:
  std::optional<Observation> previous_;
};

}  // namespace tavolo
