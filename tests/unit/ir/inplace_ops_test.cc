// The in-place twins of the op table (ir/inplace_list.inc) against PyTorch's own list:
// inplace_overloads.txt (generate_inplace_overloads.py) names every in-place ATen overload
// whose functional twin is an op of the table. Each one is handled — an in-place op of
// inplace_list.inc with that twin, detach_ as an alias, or one of the in-place shape changes
// the importer refuses by name — and each in-place op's arguments are its twin's, self
// annotated `Tensor(a!)`.
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "ir/inplace_ops.h"
#include "ir/ops.h"

namespace splice::ir {
namespace {

namespace fs = std::filesystem;

// In-place ops that change a tensor's shape or strides rather than its elements: no
// functional write expresses them, and the importer refuses them naming the op and the node.
const std::set<std::string> kShapeChangingInPlace = {
    "aten.squeeze_.default",   "aten.squeeze_.dim",     "aten.squeeze_.dims",
    "aten.unsqueeze_.default", "aten.t_.default",       "aten.transpose_.default",
    "aten.swapaxes_.default",  "aten.swapdims_.default"};

TEST(InPlaceOps, EveryInPlaceOverloadOfATableOpIsHandled) {
  std::ifstream in(fs::path(SPLICE_SOURCE_DIR) / "tests/unit/ir/inplace_overloads.txt");
  ASSERT_TRUE(in) << "inplace_overloads.txt is missing";
  std::string line;
  int checked = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string inplace, functional;
    fields >> inplace >> functional;
    SCOPED_TRACE(line);
    ASSERT_NE(find_op(functional), nullptr);
    const OpSchema* op = find_op(inplace);
    if (inplace == "aten.detach_.default") {
      ASSERT_NE(op, nullptr);
      EXPECT_EQ(op->op_class, OpClass::kAutogradOnly);
    } else if (kShapeChangingInPlace.count(inplace)) {
      EXPECT_EQ(op, nullptr) << "a shape-changing in-place op must be refused at import";
    } else {
      ASSERT_NE(op, nullptr) << "not in ir/inplace_list.inc";
      ASSERT_TRUE(functional_of(*op).has_value());
      EXPECT_EQ(op_target(*functional_of(*op)), functional);
    }
    ++checked;
  }
  EXPECT_GT(checked, 90);
}

TEST(InPlaceOps, ArgumentsAreTheFunctionalTwinsWithSelfWritten) {
  int checked = 0;
  for (const OpSchema* op : inplace_ops()) {
    SCOPED_TRACE(op->target);
    ASSERT_EQ(find_op(op->target), op);
    ASSERT_TRUE(functional_of(*op).has_value());
    const OpSchema& f = op_schema(*functional_of(*op));
    EXPECT_FALSE(functional_of(f).has_value());
    EXPECT_EQ(op->aliasing, Aliasing::kMutates);
    EXPECT_EQ(op->target.substr(0, op->target.rfind('.')),
              f.target.substr(0, f.target.rfind('.')) + "_");
    ASSERT_EQ(op->args.size(), f.args.size());
    ASSERT_FALSE(op->args.empty());
    EXPECT_EQ(op->args[0].name, "self");
    EXPECT_TRUE(op->args[0].alias_writes);
    for (size_t i = 0; i < f.args.size(); ++i) {
      // dropout(input, ...) has dropout_(self, ...): the written tensor is always `self`.
      if (i > 0 || f.args[i].name != "input") {
        EXPECT_EQ(op->args[i].name, f.args[i].name);
      }
      EXPECT_EQ(op->args[i].type_string, f.args[i].type_string);
      EXPECT_EQ(op->args[i].kwarg_only, f.args[i].kwarg_only);
      EXPECT_EQ(op->args[i].default_value.has_value(), f.args[i].default_value.has_value());
    }
    ASSERT_EQ(op->returns.size(), 1u);
    ++checked;
  }
  EXPECT_GT(checked, 90);
}

}  // namespace
}  // namespace splice::ir
