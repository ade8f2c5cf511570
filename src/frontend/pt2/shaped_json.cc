// The shape-checking SAX builder of shaped_json.h: nlohmann's SAX parser feeds it events, it
// builds the same nlohmann::json tree json::parse would, minus what the shapes drop, and stops
// the parse at the first event its shape refuses. The shape tables are in schema_shapes.cc.

#include "frontend/pt2/shaped_json.h"

#include <string>
#include <utility>
#include <vector>

namespace splice::pt2::detail {

namespace {

using Json = nlohmann::json;

bool is_container(ShapeKind kind) {
  return kind == ShapeKind::kList || kind == ShapeKind::kMap || kind == ShapeKind::kRecord ||
         kind == ShapeKind::kUnion;
}

// A number token with no fraction or exponent: JSON calls it an integer whatever its size.
bool is_integer_token(std::string_view token) {
  return token.find_first_of(".eE") == std::string_view::npos;
}

std::string shorten(std::string_view text) {
  constexpr size_t kMaxShown = 40;
  if (text.size() <= kMaxShown) return std::string(text);
  return fmt::format("{}... ({} characters)", text.substr(0, kMaxShown), text.size());
}

class ShapedBuilder {
 public:
  using number_integer_t = Json::number_integer_t;
  using number_unsigned_t = Json::number_unsigned_t;
  using number_float_t = Json::number_float_t;
  using string_t = Json::string_t;
  using binary_t = Json::binary_t;

  explicit ShapedBuilder(const Shape& root) : next_shape_(&root) {}

  bool null() { return scalar(nullptr); }
  bool boolean(bool v) { return scalar(v); }
  bool number_integer(number_integer_t v) { return scalar(v); }
  bool number_unsigned(number_unsigned_t v) { return scalar(v); }
  bool number_float(number_float_t v, const string_t& token) {
    // nlohmann reads an integer beyond 64 bits as a double; where an integer is expected that
    // is a value out of range, not a fraction.
    if (skip_depth_ == 0 && next_shape_ != nullptr && next_shape_->kind == ShapeKind::kInteger &&
        is_integer_token(token))
      return fail(fmt::format("integer {} does not fit in 64 bits", shorten(token)));
    return scalar(v);
  }
  bool string(string_t& v) {
    if (v.size() > kMaxJsonStringBytes) return fail(string_too_long(v.size()));
    return scalar(std::move(v));
  }
  bool binary(binary_t&) { return fail("binary values are not JSON"); }

  bool start_object(std::size_t) { return open(Json::value_t::object); }
  bool start_array(std::size_t) { return open(Json::value_t::array); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }

  bool key(string_t& k) {
    if (skip_depth_ > 0) return true;
    if (k.size() > kMaxJsonStringBytes) return fail(string_too_long(k.size()));
    Frame& f = frames_.back();
    f.key = std::move(k);
    const Shape& s = *f.shape;
    next_shape_ = nullptr;
    placeholder_ = false;
    if (s.kind == ShapeKind::kMap) {
      next_shape_ = s.element;
    } else {
      for (const ShapeField& field : s.fields) {
        if (field.name == f.key) next_shape_ = field.shape;
      }
      // An unknown union kind stays as its key so the reader can name it.
      placeholder_ = next_shape_ == nullptr && s.kind == ShapeKind::kUnion;
    }
    return true;
  }

  bool parse_error(std::size_t, const std::string& token, const nlohmann::json::exception& e) {
    // 406: a number beyond a double's range; valid JSON, so it is reported as what it is.
    constexpr int kNumberOverflow = 406;
    if (!error_ && e.id == kNumberOverflow) {
      return fail(
          is_integer_token(token)
              ? fmt::format("integer {} does not fit in 64 bits", shorten(token))
              : fmt::format("number {} is beyond the range of a 64-bit float", shorten(token)));
    }
    if (!error_) {
      std::string message = e.what();
      // "[json.exception.parse_error.101] parse error at line 1, column 5: ..." → from "parse".
      if (size_t at = message.find("] "); at != std::string::npos) message.erase(0, at + 2);
      // The message quotes the token read so far, which can be a whole overlong string.
      constexpr size_t kMaxMessage = 300;
      if (message.size() > kMaxMessage) message = message.substr(0, kMaxMessage) + "...";
      syntax_error_ = message;
    }
    return false;
  }

  Json take() { return std::move(root_); }
  const std::optional<Error>& error() const { return error_; }
  const std::string& syntax_error() const { return syntax_error_; }

 private:
  struct Frame {
    Json* value;
    const Shape* shape;
    std::string key;   // the key being read, in objects
    size_t index = 0;  // the position of the element being read, in arrays
  };

  // Where the value being read sits, rendered only for an error.
  std::string path() const {
    std::string out;
    for (const Frame& f : frames_) {
      if (f.value->is_array()) {
        out += fmt::format("[{}]", f.index);
      } else if (f.shape->kind == ShapeKind::kMap) {
        out += fmt::format("['{}']", shorten(f.key));
      } else {
        if (!out.empty()) out += '.';
        out += shorten(f.key);
      }
    }
    return out;
  }

  bool fail(std::string message) {
    std::string where = path();
    error_ = where.empty() ? Error(ErrorKind::kBadArchive, std::move(message))
                           : Error(ErrorKind::kBadArchive, fmt::format("{}: {}", where, message));
    return false;
  }

  std::string string_too_long(size_t size) const {
    return fmt::format("a string of {} bytes is longer than the {}-byte limit for one string", size,
                       kMaxJsonStringBytes);
  }

  // The slot for the value starting now: nullptr when it is dropped.
  Json* slot(Json&& value) {
    if (frames_.empty()) {
      root_ = std::move(value);
      return &root_;
    }
    Frame& f = frames_.back();
    if (f.value->is_array()) {
      f.value->push_back(std::move(value));
      return &f.value->back();
    }
    Json& member = (*f.value)[f.key];
    member = std::move(value);
    return &member;
  }

  // The value starting now is dropped (not in the shape) or kept as a null placeholder.
  bool dropping() const {
    return next_shape_ == nullptr || next_shape_->kind == ShapeKind::kIgnored;
  }

  // What stands for a dropped value: an unknown union kind's value becomes {} (the readers
  // of specs check for an object before the kind), an ignored value null, an unknown field
  // nothing.
  void keep_placeholder() {
    if (placeholder_) {
      slot(Json::object());
    } else if (next_shape_ != nullptr) {
      slot(Json(nullptr));
    }
  }

  template <typename T>
  bool scalar(T&& v) {
    if (skip_depth_ > 0) return true;
    if (dropping()) {
      keep_placeholder();
    } else {
      slot(Json(std::forward<T>(v)));
    }
    return after_value();
  }

  bool open(Json::value_t type) {
    if (skip_depth_ > 0) {
      ++skip_depth_;
      return true;
    }
    if (dropping()) {
      keep_placeholder();
      skip_depth_ = 1;
      return true;
    }
    const Shape& s = *next_shape_;
    const bool wants_array = s.kind == ShapeKind::kList;
    const bool is_array = type == Json::value_t::array;
    if (!is_container(s.kind) || wants_array != is_array)
      return fail(fmt::format("expected {}, got {}", s.what, is_array ? "array" : "object"));
    if (frames_.size() >= kMaxJsonDepth)
      return fail(fmt::format("values nested deeper than {} levels", kMaxJsonDepth));
    Json* value = slot(Json(type));
    frames_.push_back(Frame{value, &s, {}, 0});
    next_shape_ = wants_array ? s.element : nullptr;
    placeholder_ = false;
    return true;
  }

  bool close() {
    if (skip_depth_ > 0) {
      if (--skip_depth_ == 0) return after_value();
      return true;
    }
    frames_.pop_back();
    return after_value();
  }

  // After a value, an array's next element has the array's element shape; an object's next
  // value gets its shape from its key.
  bool after_value() {
    placeholder_ = false;
    next_shape_ = nullptr;
    if (!frames_.empty() && frames_.back().value->is_array()) {
      ++frames_.back().index;
      next_shape_ = frames_.back().shape->element;
    }
    return true;
  }

  Json root_;
  std::vector<Frame> frames_;
  const Shape* next_shape_;
  bool placeholder_ = false;
  size_t skip_depth_ = 0;  // > 0 inside a dropped value
  std::optional<Error> error_;
  std::string syntax_error_;
};

}  // namespace

Result<nlohmann::json> parse_shaped_json(std::string_view text, const Shape& shape,
                                         const char* what) {
  ShapedBuilder builder(shape);
  const bool ok = Json::sax_parse(text.begin(), text.end(), &builder, Json::input_format_t::json,
                                  /*strict=*/true);
  if (builder.error()) return *builder.error();
  if (!ok) {
    return make_error(ErrorKind::kBadArchive, "{} is not valid JSON ({} bytes): {}", what,
                      text.size(), builder.syntax_error());
  }
  return builder.take();
}

}  // namespace splice::pt2::detail
