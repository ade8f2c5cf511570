#pragma once
// Whether two paths of one command name the same file, so that no command overwrites one of
// its own inputs (`splice compile m.pt2 -o m.pt2`, `run m.pt2 --outputs m.pt2`) or writes two
// of its outputs to one file (`--outputs X --state-out X`, where X would hold only the last).
//
// An existing file is known by its device and inode (so hard links, symbolic links and other
// spellings of the same path all match); an output that does not exist yet by its folder's
// device and inode and its name.

#include <string>
#include <vector>

#include "support/error.h"

namespace splice {

// A path as the command line names it: `option` is how a message refers to it ("--outputs",
// "the model").
struct NamedPath {
  std::string option;
  std::string path;
};

// Refuses (ErrorKind::kBadUsage) an output that is the same file as an input or as another
// output; the message names both options and the path. Inputs may share a file with each
// other. Paths that cannot be examined (a missing input) are not compared: opening them
// reports that.
Result<void> check_distinct_files(const std::vector<NamedPath>& inputs,
                                  const std::vector<NamedPath>& outputs);

}  // namespace splice
