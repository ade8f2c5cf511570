// The .pt2 loader: finds the archive's root folder, reads models/<name>.json into schema
// structs, imports them into the IR, attaches weights and constants as views of the archive
// (zero-copy where the zip entry is stored and 64-byte aligned). It only reads: checking the
// recorded types and the passes are the compiler driver's (compiler/driver.h).
#include "frontend/pt2/loader.h"

#include "frontend/pt2/importer.h"
#include "frontend/pt2/inline_subgraphs.h"
#include "frontend/pt2/schema.h"
#include "frontend/pt2/zip_reader.h"
#include "support/checked_math.h"

namespace splice::pt2 {

namespace {

constexpr int64_t kMaxRank = 64;

// The program's JSON: models/model.json, else the only models/*.json.
Result<std::string> model_entry(const ZipArchive& zip, const std::string& prefix) {
  std::string preferred = prefix + "models/model.json";
  if (zip.find(preferred) != nullptr) return preferred;
  std::vector<std::string> found;
  for (const auto& e : zip.entries()) {
    std::string_view n = e.name;
    if (n.starts_with(prefix + "models/") && n.ends_with(".json")) found.push_back(e.name);
  }
  if (found.size() == 1) return found[0];
  if (found.empty())
    return make_error(ErrorKind::kBadArchive, "the archive has no program: entry '{}' is missing",
                      preferred);
  return make_error(ErrorKind::kBadArchive,
                    "the archive holds {} programs under {}models/ and none is model.json",
                    found.size(), prefix);
}

Result<PayloadConfig> read_config(const ZipArchive& zip, const std::string& entry) {
  if (zip.find(entry) == nullptr) return PayloadConfig{};
  SPLICE_ASSIGN_OR_RETURN(EntryData text, zip.read_text(entry));
  auto config = parse_payload_config(text.text());
  if (!config.ok()) return config.error().with_context(entry);
  return std::move(*config);
}

Result<std::vector<int64_t>> constant_ints(const std::vector<SymInt>& v, std::string_view what,
                                           std::string_view where) {
  std::vector<int64_t> out;
  for (const auto& s : v) {
    auto* c = std::get_if<int64_t>(&s.value);
    if (c == nullptr) return make_error(ErrorKind::kBadArchive, "{}: {} are symbolic", where, what);
    out.push_back(*c);
  }
  return out;
}

class WeightLoader {
 public:
  WeightLoader(const ZipArchive& zip, std::string prefix) : zip_(zip), prefix_(std::move(prefix)) {}

  Result<void> load(ir::Program& program) {
    SPLICE_ASSIGN_OR_RETURN(PayloadConfig weights,
                            read_config(zip_, prefix_ + "data/weights/model_weights_config.json"));
    SPLICE_ASSIGN_OR_RETURN(
        PayloadConfig constants,
        read_config(zip_, prefix_ + "data/constants/model_constants_config.json"));
    for (const ir::InputSpec& spec : program.signature.inputs) {
      if (spec.kind != ir::InputKind::kParameter && spec.kind != ir::InputKind::kBuffer &&
          spec.kind != ir::InputKind::kTensorConstant)
        continue;
      if (program.weights.count(spec.target)) continue;
      const PayloadMeta* meta = nullptr;
      std::string folder;
      if (auto it = weights.config.find(spec.target); it != weights.config.end()) {
        meta = &it->second;
        folder = "data/weights/";
      } else if (auto it2 = constants.config.find(spec.target); it2 != constants.config.end()) {
        meta = &it2->second;
        folder = "data/constants/";
      } else {
        return make_error(ErrorKind::kBadArchive,
                          "{} '{}' has no entry in the archive's weights or constants config",
                          ir::input_kind_name(spec.kind), spec.target);
      }
      SPLICE_ASSIGN_OR_RETURN(Tensor t, load_tensor(spec.target, *meta, folder));
      const ir::TensorType& type = spec.value->type();
      if (t.dtype() != type.dtype || t.dim() != type.rank())
        return make_error(ErrorKind::kBadArchive,
                          "weight '{}' is {}{} in its config but the graph expects {}", spec.target,
                          dtype_name(t.dtype()), shape_string(t.sizes()), type.to_string());
      program.weights.emplace(spec.target, std::move(t));
    }
    return ok_result();
  }

 private:
  Result<Tensor> load_tensor(const std::string& fqn, const PayloadMeta& meta,
                             const std::string& folder) {
    std::string where = fmt::format("weight '{}'", fqn);
    if (meta.use_pickle)
      return make_error(ErrorKind::kBadArchive,
                        "{} is stored as a pickle (a tensor subclass or custom object); splice "
                        "never executes pickle: export plain tensors",
                        where);
    if (!meta.tensor_meta)
      return make_error(ErrorKind::kBadArchive, "{} has no tensor metadata", where);
    const TensorMeta& tm = *meta.tensor_meta;
    auto dtype = dtype_from_schema(tm.dtype);
    if (!dtype)
      return make_error(ErrorKind::kBadArchive, "{} has dtype {}, which splice does not support",
                        where, tm.dtype);
    SPLICE_ASSIGN_OR_RETURN(auto sizes, constant_ints(tm.sizes, "sizes", where));
    SPLICE_ASSIGN_OR_RETURN(auto strides, constant_ints(tm.strides, "strides", where));
    if (static_cast<int64_t>(sizes.size()) > kMaxRank || strides.size() != sizes.size())
      return make_error(ErrorKind::kBadArchive, "{} has rank {} with {} strides", where,
                        sizes.size(), strides.size());
    auto* offset = std::get_if<int64_t>(&tm.storage_offset.value);
    if (offset == nullptr)
      return make_error(ErrorKind::kBadArchive, "{}: storage offset is symbolic", where);

    std::shared_ptr<Storage> storage;
    std::string entry_name = prefix_ + folder + meta.path_name;
    if (auto it = storages_.find(entry_name); it != storages_.end()) {
      storage = it->second;  // a tied weight: same bytes
    } else {
      const ZipEntry* entry = zip_.find(entry_name);
      if (entry == nullptr)
        return make_error(ErrorKind::kBadArchive, "{}: entry '{}' is missing", where, entry_name);
      SPLICE_ASSIGN_OR_RETURN(EntryData data, zip_.read(*entry));
      storage = Storage::borrow(const_cast<std::byte*>(data.bytes().data()), data.bytes().size(),
                                data.owner(), false);
      storages_.emplace(entry_name, storage);
    }
    Tensor t(*dtype, sizes, strides, *offset, storage);
    auto in_bounds = check_view_in_bounds(t);
    if (!in_bounds.ok()) return in_bounds.error().with_context(where);
    return t;
  }

  const ZipArchive& zip_;
  std::string prefix_;
  std::map<std::string, std::shared_ptr<Storage>> storages_;
};

}  // namespace

Result<ir::Program> load_recorded_program(const std::string& path) {
  auto zip = ZipArchive::open(path);
  if (!zip.ok()) return zip.error();  // its errors already name the file
  auto result = [&]() -> Result<ir::Program> {
    SPLICE_ASSIGN_OR_RETURN(std::string prefix, zip->archive_prefix());
    if (const ZipEntry* fmt_entry = zip->find(prefix + "archive_format")) {
      SPLICE_ASSIGN_OR_RETURN(EntryData d, zip->read(*fmt_entry));
      std::string_view format(reinterpret_cast<const char*>(d.bytes().data()), d.bytes().size());
      if (format != "pt2")
        return make_error(ErrorKind::kBadArchive,
                          "archive_format is '{}', not 'pt2' (is this a torch.save file?)",
                          format.substr(0, 32));
    }
    SPLICE_ASSIGN_OR_RETURN(std::string entry, model_entry(*zip, prefix));
    // Parsed where it lies (in the map, or in the one buffer it was inflated to).
    SPLICE_ASSIGN_OR_RETURN(EntryData json, zip->read_text(entry));
    auto ep = parse_exported_program(json.text());
    if (!ep.ok()) return ep.error().with_context(entry);
    SPLICE_TRY(inline_grad_mode_regions(ep->graph_module.graph));
    SPLICE_ASSIGN_OR_RETURN(ir::Program program, import_program(*ep));
    SPLICE_TRY(WeightLoader(*zip, prefix).load(program));
    return program;
  }();
  if (!result.ok()) return result.error().with_context(path);
  return result;
}

}  // namespace splice::pt2
