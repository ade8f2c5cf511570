// Names of the plan's enums, as `splice inspect --plan` prints them and engine files store them.
#include <array>
#include <string_view>
#include <utility>

#include "plan/plan.h"

namespace splice::plan {

namespace {

constexpr std::array<std::pair<WriteStrategy, const char*>, 4> kStrategies{{
    {WriteStrategy::kInPlaceState, "in_place_state"},
    {WriteStrategy::kFullOverwrite, "full_overwrite"},
    {WriteStrategy::kReuseBase, "reuse_base"},
    {WriteStrategy::kCopyThenWrite, "copy_then_write"},
}};
constexpr std::array<std::pair<SrcMode, const char*>, 2> kSrcModes{{
    {SrcMode::kProducerWrites, "producer_writes"},
    {SrcMode::kCopied, "copied"},
}};
constexpr std::array<std::pair<GroupKind, const char*>, 3> kGroupKinds{{
    {GroupKind::kPointwise, "pointwise"},
    {GroupKind::kRmsNorm, "rms_norm"},
    {GroupKind::kGemvEpilogue, "gemv_epilogue"},
}};
constexpr std::array<std::pair<PlanMode, const char*>, 2> kPlanModes{{
    {PlanMode::kPlanned, "planned"},
    {PlanMode::kNaive, "naive"},
}};

template <typename E, size_t N>
const char* name_of(const std::array<std::pair<E, const char*>, N>& table, E e) {
  for (const auto& [value, name] : table)
    if (value == e) return name;
  return "?";
}

template <typename E, size_t N>
std::optional<E> parse(const std::array<std::pair<E, const char*>, N>& table,
                       std::string_view text) {
  for (const auto& [value, name] : table)
    if (text == name) return value;
  return std::nullopt;
}

}  // namespace

const char* strategy_name(WriteStrategy s) { return name_of(kStrategies, s); }
const char* src_mode_name(SrcMode m) { return name_of(kSrcModes, m); }
const char* plan_mode_name(PlanMode m) { return name_of(kPlanModes, m); }
std::optional<WriteStrategy> parse_strategy(std::string_view n) { return parse(kStrategies, n); }
std::optional<SrcMode> parse_src_mode(std::string_view n) { return parse(kSrcModes, n); }
std::optional<PlanMode> parse_plan_mode(std::string_view n) { return parse(kPlanModes, n); }
const char* group_kind_name(GroupKind k) { return name_of(kGroupKinds, k); }
std::optional<GroupKind> parse_group_kind(std::string_view n) { return parse(kGroupKinds, n); }

}  // namespace splice::plan
