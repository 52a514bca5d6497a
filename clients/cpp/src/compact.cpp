#include "tavolo/compact.hpp"

#include <string>

namespace tavolo {
namespace {

template <typename Item>
void prepend(const google::protobuf::RepeatedPtrField<Item>& before,
             google::protobuf::RepeatedPtrField<Item>* items) {
  google::protobuf::RepeatedPtrField<Item> added;
  added.Swap(items);
  *items = before;
  items->MergeFrom(added);
}

std::string where(const Observation& o) {
  return "game " + std::to_string(o.game()) + ", deal " + std::to_string(o.deal());
}

}  // namespace

void CompactMerger::complete(Observation& observation) {
  if (observation.compact()) {
    if (!previous_) {
      throw CompactError("the referee sent a compact observation (" + where(observation) +
                         ") as the first of this stream, with nothing to add it to");
    }
    const Observation& before = *previous_;
    if (before.game() != observation.game() || before.deal() != observation.deal()) {
      throw CompactError("the referee sent a compact observation of " + where(observation) +
                         " after one of " + where(before) + " (a new deal must come complete)");
    }
    prepend(before.tricks(), observation.mutable_tricks());
    prepend(before.declarations(), observation.mutable_declarations());
    prepend(before.draws(), observation.mutable_draws());
    // Whether there is a CalabresellaView at all is one of the complete fields.
    if (observation.has_calabresella()) {
      prepend(before.calabresella().bids(), observation.mutable_calabresella()->mutable_bids());
    }
    observation.set_compact(false);
  }
  previous_ = observation;
}

}  // namespace tavolo
