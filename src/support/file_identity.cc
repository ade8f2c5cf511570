// check_distinct_files: each path becomes an identity, (device, inode) of the file or, for an
// output not yet there, (device, inode) of its folder plus its name; equal identities collide.
#include "support/file_identity.h"

#include <sys/stat.h>

#include <filesystem>
#include <optional>

namespace splice {

namespace {

struct Identity {
  dev_t device = 0;
  ino_t inode = 0;
  std::string name;  // empty for an existing file
  bool operator==(const Identity&) const = default;
};

std::optional<Identity> identify(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) return Identity{st.st_dev, st.st_ino, ""};
  const std::filesystem::path p(path);
  const std::string name = p.filename().string();
  if (name.empty()) return std::nullopt;
  const std::string folder = p.has_parent_path() ? p.parent_path().string() : ".";
  if (::stat(folder.c_str(), &st) != 0) return std::nullopt;
  return Identity{st.st_dev, st.st_ino, name};
}

}  // namespace

Result<void> check_distinct_files(const std::vector<NamedPath>& inputs,
                                  const std::vector<NamedPath>& outputs) {
  std::vector<std::pair<const NamedPath*, Identity>> seen;
  for (const NamedPath& in : inputs)
    if (auto id = identify(in.path)) seen.emplace_back(&in, *id);
  const size_t input_count = seen.size();
  for (const NamedPath& out : outputs) {
    std::optional<Identity> id = identify(out.path);
    if (!id) continue;
    for (size_t i = 0; i < seen.size(); ++i) {
      if (!(seen[i].second == *id)) continue;
      const NamedPath& other = *seen[i].first;
      const std::string same_path = other.path == out.path
                                        ? fmt::format("'{}'", out.path)
                                        : fmt::format("'{}' and '{}'", other.path, out.path);
      if (i < input_count)
        return make_error(ErrorKind::kBadUsage,
                          "{} and {} are the same file ({}): splice will not overwrite a file it "
                          "reads; write the output elsewhere",
                          other.option, out.option, same_path);
      return make_error(ErrorKind::kBadUsage,
                        "{} and {} are the same file ({}): each output needs its own file",
                        other.option, out.option, same_path);
    }
    seen.emplace_back(&out, *id);
  }
  return ok_result();
}

}  // namespace splice
