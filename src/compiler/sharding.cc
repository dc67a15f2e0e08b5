#include "compiler/sharding.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <map>

#include "base/env.h"

namespace kiln::compiler {
namespace {

// A cursor over sdy attribute text: strings, integers, names and
// punctuation, with spaces skipped.
class Cursor {
 public:
  explicit Cursor(std::string_view text) : text_(text) {}

  bool done() {
    Skip();
    return at_ == text_.size();
  }
  bool Peek(char c) {
    Skip();
    return at_ < text_.size() && text_[at_] == c;
  }
  bool Accept(char c) {
    if (!Peek(c)) return false;
    ++at_;
    return true;
  }
  bool AcceptWord(std::string_view word) {
    Skip();
    if (text_.substr(at_, word.size()) != word) return false;
    at_ += word.size();
    return true;
  }
  Status Expect(char c) {
    if (Accept(c)) return Status::Ok();
    return Error(StrCat("expected '", std::string(1, c), "'"));
  }
  StatusOr<std::string> String() {
    KILN_RETURN_IF_ERROR(Expect('"'));
    std::string value;
    while (at_ < text_.size() && text_[at_] != '"') {
      if (text_[at_] == '\\' && at_ + 1 < text_.size()) ++at_;
      value += text_[at_++];
    }
    KILN_RETURN_IF_ERROR(Expect('"'));
    return value;
  }
  StatusOr<int64_t> Integer() {
    Skip();
    size_t end = at_;
    if (end < text_.size() && text_[end] == '-') ++end;
    while (end < text_.size() && std::isdigit(static_cast<unsigned char>(text_[end]))) ++end;
    if (end == at_) return Error("expected an integer");
    StatusOr<int64_t> value = ParseInt64(text_.substr(at_, end - at_), "integer");
    if (!value.ok()) return Error(value.status().message());
    at_ = end;
    return *value;
  }
  // A symbol name after '@'.
  StatusOr<std::string> Symbol() {
    KILN_RETURN_IF_ERROR(Expect('@'));
    if (Peek('"')) return String();
    size_t end = at_;
    while (end < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[end])) ||
                                  text_[end] == '_' || text_[end] == '.' || text_[end] == '$')) {
      ++end;
    }
    std::string name(text_.substr(at_, end - at_));
    at_ = end;
    if (name.empty()) return Error("expected a symbol name");
    return name;
  }
  // Skips a balanced group starting at the next character ([...], {...},
  // <...>) or one word.
  void SkipItem() {
    Skip();
    int depth = 0;
    while (at_ < text_.size()) {
      const char c = text_[at_];
      if (c == '"') {
        (void)String();
        continue;
      }
      if (c == '[' || c == '{' || c == '<' || c == '(') ++depth;
      if (c == ']' || c == '}' || c == '>' || c == ')') {
        if (depth == 0) return;
        --depth;
      }
      if (c == ',' && depth == 0) return;
      ++at_;
    }
  }
  Status Error(std::string_view what) const {
    return InvalidArgument("sdy attribute `", text_, "`: ", what, " at offset ", at_);
  }

 private:
  void Skip() {
    while (at_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[at_]))) ++at_;
  }
  std::string_view text_;
  size_t at_ = 0;
};

// More devices than any mesh can have; keeps device counts and positions far
// from overflow.
constexpr int64_t kMaxMeshDevices = int64_t{1} << 32;

// `["a"=2, "b"=4]` then optionally `, device_ids=[...]`; the caller has
// consumed '<' and consumes '>'.
StatusOr<Mesh> MeshBody(Cursor& in) {
  Mesh mesh;
  KILN_RETURN_IF_ERROR(in.Expect('['));
  while (!in.Accept(']')) {
    if (!mesh.axes.empty()) KILN_RETURN_IF_ERROR(in.Expect(','));
    KILN_ASSIGN_OR_RETURN(std::string name, in.String());
    KILN_RETURN_IF_ERROR(in.Expect('='));
    KILN_ASSIGN_OR_RETURN(int64_t size, in.Integer());
    if (size <= 0) return in.Error("a mesh axis size must be positive");
    if (size > kMaxMeshDevices / mesh.num_devices()) {
      return in.Error(StrCat("a mesh of more than ", kMaxMeshDevices, " devices"));
    }
    mesh.axes.push_back(std::move(name));
    mesh.sizes.push_back(size);
  }
  if (in.Accept(',')) {
    if (!in.AcceptWord("device_ids")) return in.Error("expected device_ids");
    KILN_RETURN_IF_ERROR(in.Expect('='));
    KILN_RETURN_IF_ERROR(in.Expect('['));
    while (!in.Accept(']')) {
      if (!mesh.device_ids.empty()) KILN_RETURN_IF_ERROR(in.Expect(','));
      KILN_ASSIGN_OR_RETURN(int64_t id, in.Integer());
      mesh.device_ids.push_back(id);
    }
    if (static_cast<int64_t>(mesh.device_ids.size()) != mesh.num_devices()) {
      return in.Error(StrCat("device_ids lists ", mesh.device_ids.size(), " devices for a mesh of ",
                             mesh.num_devices()));
    }
  }
  return mesh;
}

// `@name` or `mesh<...>` / `#sdy.mesh<...>` inline.
StatusOr<Mesh> MeshRef(Cursor& in, const MeshTable& meshes) {
  if (in.Peek('@')) {
    KILN_ASSIGN_OR_RETURN(std::string name, in.Symbol());
    auto found = meshes.find(name);
    if (found == meshes.end()) return in.Error(StrCat("no sdy.mesh @", name));
    return found->second;
  }
  if (!in.AcceptWord("#sdy.mesh") && !in.AcceptWord("mesh")) {
    return in.Error("expected a mesh (@name or mesh<...>)");
  }
  KILN_RETURN_IF_ERROR(in.Expect('<'));
  KILN_ASSIGN_OR_RETURN(Mesh mesh, MeshBody(in));
  KILN_RETURN_IF_ERROR(in.Expect('>'));
  return mesh;
}

// `{"a", "b":(1)2, ?}p3`: the axes of one dimension.
StatusOr<std::vector<AxisRef>> DimBody(Cursor& in, const Mesh& mesh, bool* open = nullptr) {
  std::vector<AxisRef> axes;
  KILN_RETURN_IF_ERROR(in.Expect('{'));
  bool first = true;
  while (!in.Accept('}')) {
    if (!first) KILN_RETURN_IF_ERROR(in.Expect(','));
    first = false;
    if (in.Accept('?')) {  // open: propagation may add axes
      if (open != nullptr) *open = true;
      continue;
    }
    AxisRef ref;
    KILN_ASSIGN_OR_RETURN(ref.name, in.String());
    const int64_t whole = mesh.WrittenSize(ref.name);
    if (whole < 0) return in.Error(StrCat("no mesh axis \"", ref.name, "\""));
    if (in.Accept(':')) {
      KILN_RETURN_IF_ERROR(in.Expect('('));
      KILN_ASSIGN_OR_RETURN(ref.pre_size, in.Integer());
      KILN_RETURN_IF_ERROR(in.Expect(')'));
      KILN_ASSIGN_OR_RETURN(ref.size, in.Integer());
      // pre_size * size divides the axis, checked without multiplying
      // (input-sized factors would overflow).
      if (ref.pre_size <= 0 || ref.size <= 0 || whole % ref.pre_size != 0 ||
          (whole / ref.pre_size) % ref.size != 0) {
        return in.Error(StrCat("sub-axis \"", ref.name, "\":(", ref.pre_size, ")", ref.size,
                               " does not divide the axis of size ", whole));
      }
    }
    if (ref.pre_size == 1 && ref.size == whole) ref.size = 0;  // the whole axis
    // Over a refined mesh, the parts it spans.
    std::optional<std::vector<AxisRef>> parts = mesh.Resolve(ref);
    if (!parts) {
      return in.Error(StrCat("sub-axis \"", ref.name, "\":(", ref.pre_size, ")", ref.size,
                             " cuts a part of the refined mesh"));
    }
    axes.insert(axes.end(), parts->begin(), parts->end());
  }
  if (in.Accept('p')) KILN_RETURN_IF_ERROR(in.Integer().status());  // a priority
  return axes;
}

// `@mesh, [dims], replicated={...}, unreduced={...}` up to (not including)
// the closing '>'.
StatusOr<TensorSharding> ShardingBody(Cursor& in, const MeshTable& meshes) {
  TensorSharding sharding;
  KILN_ASSIGN_OR_RETURN(sharding.mesh, MeshRef(in, meshes));
  KILN_RETURN_IF_ERROR(in.Expect(','));
  KILN_RETURN_IF_ERROR(in.Expect('['));
  while (!in.Accept(']')) {
    if (!sharding.dims.empty()) KILN_RETURN_IF_ERROR(in.Expect(','));
    bool open = false;
    KILN_ASSIGN_OR_RETURN(std::vector<AxisRef> axes, DimBody(in, sharding.mesh, &open));
    sharding.dims.push_back(std::move(axes));
    sharding.open.push_back(open);
  }
  // replicated={...}: axes the tensor is whole over (as it is over any axis
  // it does not name). unreduced={...}: axes over which each device holds
  // a partial sum of the value (`unreduced=max{...}` / `min{...}` name other
  // reductions, which Kiln does not hold).
  while (in.Accept(',')) {
    if (!in.AcceptWord("unreduced")) {
      in.SkipItem();
      continue;
    }
    KILN_RETURN_IF_ERROR(in.Expect('='));
    if (in.AcceptWord("max") || in.AcceptWord("min")) {
      return in.Error("unreduced axes of a max or min reduction are not supported");
    }
    (void)in.AcceptWord("sum");
    KILN_ASSIGN_OR_RETURN(sharding.unreduced, DimBody(in, sharding.mesh));
  }
  return sharding;
}

}  // namespace

int64_t Mesh::num_devices() const {
  int64_t count = 1;
  for (int64_t size : sizes) count *= size;
  return count;
}

int Mesh::AxisIndex(std::string_view name) const {
  for (size_t i = 0; i < axes.size(); ++i) {
    if (axes[i] == name) return static_cast<int>(i);
  }
  return -1;
}

std::optional<std::vector<int64_t>> Mesh::CoordinatesOf(int64_t device) const {
  int64_t position = device;
  if (!device_ids.empty()) {
    auto found = std::find(device_ids.begin(), device_ids.end(), device);
    if (found == device_ids.end()) return std::nullopt;
    position = found - device_ids.begin();
  } else if (device < 0 || device >= num_devices()) {
    return std::nullopt;
  }
  std::vector<int64_t> coordinates(axes.size());
  for (size_t a = axes.size(); a-- > 0;) {
    coordinates[a] = position % sizes[a];
    position /= sizes[a];
  }
  return coordinates;
}

int64_t Mesh::DeviceAt(std::span<const int64_t> coordinates) const {
  int64_t position = 0;
  for (size_t a = 0; a < axes.size(); ++a) position = position * sizes[a] + coordinates[a];
  return device_ids.empty() ? position : device_ids[static_cast<size_t>(position)];
}

int64_t Mesh::WrittenSize(std::string_view name) const {
  if (written.empty()) {
    const int axis = AxisIndex(name);
    return axis < 0 ? -1 : sizes[static_cast<size_t>(axis)];
  }
  int64_t size = -1;
  for (size_t a = 0; a < axes.size(); ++a) {
    if (written[a].name == name) size = (size < 0 ? 1 : size) * sizes[a];
  }
  return size;
}

std::optional<std::vector<AxisRef>> Mesh::Resolve(const AxisRef& ref) const {
  if (written.empty() || AxisIndex(ref.name) >= 0) {
    // An axis as written (a refined mesh keeps the name of one it left
    // whole).
    if (AxisIndex(ref.name) < 0) return std::nullopt;
    return std::vector<AxisRef>{ref};
  }
  const int64_t whole = WrittenSize(ref.name);
  if (whole < 0 || ref.pre_size <= 0 || ref.size < 0 || ref.pre_size > whole ||
      ref.size > whole / ref.pre_size) {
    return std::nullopt;
  }
  const int64_t begin = ref.pre_size;
  const int64_t end = ref.size == 0 ? whole : ref.pre_size * ref.size;
  std::vector<AxisRef> parts;
  int64_t covered = 1;
  for (size_t a = 0; a < axes.size(); ++a) {
    const AxisRef& part = written[a];
    if (part.name != ref.name || part.pre_size < begin || part.pre_size * part.size > end) continue;
    parts.push_back(AxisRef{axes[a], 1, 0});
    covered *= part.size;
  }
  if (covered * begin != end) return std::nullopt;
  return parts;
}

Mesh RefineMesh(const Mesh& mesh, std::span<const AxisRef> used) {
  Mesh refined;
  refined.device_ids = mesh.device_ids;
  bool cut = false;
  for (size_t a = 0; a < mesh.axes.size(); ++a) {
    const std::string& name = mesh.axes[a];
    const int64_t size = mesh.sizes[a];
    std::vector<int64_t> bounds = {1, size};
    for (const AxisRef& ref : used) {
      // (Bounds checked before multiplying: a collective's sub_axis_info
      // comes unchecked.)
      if (ref.name != name || ref.size <= 0 || ref.pre_size <= 0 || ref.pre_size > size ||
          ref.size > size / ref.pre_size || size % (ref.pre_size * ref.size) != 0) {
        continue;
      }
      bounds.push_back(ref.pre_size);
      bounds.push_back(ref.pre_size * ref.size);
    }
    std::sort(bounds.begin(), bounds.end());
    bounds.erase(std::unique(bounds.begin(), bounds.end()), bounds.end());
    bool chain = true;
    for (size_t i = 1; i < bounds.size(); ++i) chain = chain && bounds[i] % bounds[i - 1] == 0;
    if (!chain || bounds.size() <= 2) {
      refined.axes.push_back(name);
      refined.sizes.push_back(size);
      refined.written.push_back(AxisRef{name, 1, 0});
      continue;
    }
    cut = true;
    for (size_t i = 1; i < bounds.size(); ++i) {
      const int64_t part = bounds[i] / bounds[i - 1];
      refined.axes.push_back(StrCat(name, ":(", bounds[i - 1], ")", part));
      refined.sizes.push_back(part);
      refined.written.push_back(AxisRef{name, bounds[i - 1], part});
    }
  }
  return cut ? refined : mesh;
}

TensorSharding WithoutSubAxes(const TensorSharding& sharding) {
  TensorSharding kept = sharding;
  const Mesh& mesh = sharding.mesh;
  for (auto& axes : kept.dims) {
    size_t end = 0;  // axes[0, end) are whole axes as written
    while (end < axes.size()) {
      const AxisRef& ref = axes[end];
      if (ref.pre_size != 1 || ref.size != 0) break;
      const int axis = mesh.AxisIndex(ref.name);
      if (mesh.written.empty() || axis < 0 || mesh.written[static_cast<size_t>(axis)].size == 0) {
        ++end;
        continue;
      }
      // A part: whole only with the parts after it, in order.
      const std::string& name = mesh.written[static_cast<size_t>(axis)].name;
      const int64_t whole = mesh.WrittenSize(name);
      int64_t covered = 1;
      size_t next = end;
      while (next < axes.size() && covered < whole) {
        const int part = mesh.AxisIndex(axes[next].name);
        if (part < 0 || mesh.written[static_cast<size_t>(part)].name != name ||
            mesh.written[static_cast<size_t>(part)].pre_size != covered) {
          break;
        }
        covered *= mesh.sizes[static_cast<size_t>(part)];
        ++next;
      }
      if (covered != whole) break;
      end = next;
    }
    axes.resize(end);
  }
  return kept;
}

int64_t TensorSharding::SizeOf(const AxisRef& ref) const {
  return ref.size > 0 ? ref.size : mesh.sizes[static_cast<size_t>(mesh.AxisIndex(ref.name))];
}

int64_t TensorSharding::CoordinateOf(const AxisRef& ref,
                                     std::span<const int64_t> coordinates) const {
  const auto axis = static_cast<size_t>(mesh.AxisIndex(ref.name));
  if (ref.size == 0) return coordinates[axis];
  const int64_t minor = mesh.sizes[axis] / (ref.pre_size * ref.size);
  return (coordinates[axis] / minor) % ref.size;
}

int64_t TensorSharding::Tiles(size_t d) const {
  int64_t tiles = 1;
  for (const AxisRef& ref : dims[d]) tiles *= SizeOf(ref);
  return tiles;
}

int64_t TensorSharding::TileOf(size_t d, std::span<const int64_t> coordinates) const {
  int64_t tile = 0;
  for (const AxisRef& ref : dims[d]) tile = tile * SizeOf(ref) + CoordinateOf(ref, coordinates);
  return tile;
}

StatusOr<std::vector<int64_t>> TensorSharding::LocalDims(std::span<const int64_t> global) const {
  if (global.size() != dims.size()) {
    return InvalidArgument("a sharding of rank ", dims.size(), " for a tensor of rank ",
                           global.size());
  }
  for (size_t d = 0; d < dims.size(); ++d) {
    if (global[d] % Tiles(d) != 0) {
      return Unimplemented("dimension ", d, " of size ", global[d], " does not split evenly into ",
                           Tiles(d), " tiles");
    }
  }
  return PaddedDims(global);  // no padding
}

StatusOr<std::vector<int64_t>> TensorSharding::PaddedDims(std::span<const int64_t> global) const {
  if (global.size() != dims.size()) {
    return InvalidArgument("a sharding of rank ", dims.size(), " for a tensor of rank ",
                           global.size());
  }
  std::vector<int64_t> local(global.begin(), global.end());
  for (size_t d = 0; d < dims.size(); ++d) {
    const int64_t tiles = Tiles(d);
    local[d] = global[d] / tiles + (global[d] % tiles != 0 ? 1 : 0);
  }
  return local;
}

bool TensorSharding::IsReplicated() const {
  for (const auto& axes : dims) {
    if (!axes.empty()) return false;
  }
  return unreduced.empty();
}

StatusOr<Mesh> ParseMesh(std::string_view text) {
  Cursor in(text);
  (void)in.AcceptWord("#sdy.mesh");
  KILN_RETURN_IF_ERROR(in.Expect('<'));
  KILN_ASSIGN_OR_RETURN(Mesh mesh, MeshBody(in));
  KILN_RETURN_IF_ERROR(in.Expect('>'));
  if (!in.done()) return in.Error("unexpected text after the mesh");
  return mesh;
}

StatusOr<TensorSharding> ParseSharding(std::string_view text, const MeshTable& meshes) {
  Cursor in(text);
  (void)in.AcceptWord("#sdy.sharding");
  KILN_RETURN_IF_ERROR(in.Expect('<'));
  KILN_ASSIGN_OR_RETURN(TensorSharding sharding, ShardingBody(in, meshes));
  KILN_RETURN_IF_ERROR(in.Expect('>'));
  if (!in.done()) return in.Error("unexpected text after the sharding");
  return sharding;
}

StatusOr<std::vector<TensorSharding>> ParseShardingPerValue(std::string_view text,
                                                            const MeshTable& meshes) {
  Cursor in(text);
  (void)in.AcceptWord("#sdy.sharding_per_value");
  KILN_RETURN_IF_ERROR(in.Expect('<'));
  KILN_RETURN_IF_ERROR(in.Expect('['));
  std::vector<TensorSharding> shardings;
  while (!in.Accept(']')) {
    if (!shardings.empty()) KILN_RETURN_IF_ERROR(in.Expect(','));
    KILN_RETURN_IF_ERROR(in.Expect('<'));
    KILN_ASSIGN_OR_RETURN(TensorSharding sharding, ShardingBody(in, meshes));
    KILN_RETURN_IF_ERROR(in.Expect('>'));
    shardings.push_back(std::move(sharding));
  }
  KILN_RETURN_IF_ERROR(in.Expect('>'));
  return shardings;
}

StatusOr<std::vector<std::string>> ParseManualAxes(std::string_view text) {
  Cursor in(text);
  (void)in.AcceptWord("#sdy<manual_axes");
  (void)in.AcceptWord("manual_axes");
  KILN_RETURN_IF_ERROR(in.Expect('{'));
  std::vector<std::string> axes;
  while (!in.Accept('}')) {
    if (!axes.empty()) KILN_RETURN_IF_ERROR(in.Expect(','));
    KILN_ASSIGN_OR_RETURN(std::string name, in.String());
    axes.push_back(std::move(name));
  }
  return axes;
}

bool IsManualHloSharding(std::string_view text) {
  Cursor in(text);
  return in.Accept('{') && in.AcceptWord("manual") && in.Accept('}');
}

StatusOr<std::optional<TensorSharding>> ParseHloSharding(std::string_view text,
                                                         int64_t partitions) {
  Cursor in(text);
  KILN_RETURN_IF_ERROR(in.Expect('{'));
  if (in.AcceptWord("replicated") || in.AcceptWord("maximal")) {
    return std::optional<TensorSharding>();
  }
  if (in.AcceptWord("manual")) {
    return Unimplemented("GSPMD's {manual} sharding outside SPMDFullToShardShape");
  }
  if (!in.AcceptWord("devices")) return in.Error("expected replicated, maximal or devices=");
  KILN_RETURN_IF_ERROR(in.Expect('='));
  KILN_RETURN_IF_ERROR(in.Expect('['));
  std::vector<int64_t> tiles;
  int64_t count = 1;
  while (!in.Accept(']')) {
    if (!tiles.empty()) KILN_RETURN_IF_ERROR(in.Expect(','));
    KILN_ASSIGN_OR_RETURN(int64_t size, in.Integer());
    if (size <= 0 || size > partitions / count) {
      return in.Error(StrCat("tiles for more devices than the program's ", partitions));
    }
    count *= size;
    tiles.push_back(size);
  }
  if (count != partitions) {
    return in.Error(StrCat("tiles for ", count, " devices, the program has ", partitions));
  }
  std::vector<int64_t> devices;
  if (in.Accept('<')) {
    // An iota: 0..count-1 reshaped to `dims`, transposed by `perm`.
    KILN_RETURN_IF_ERROR(in.Expect('='));
    KILN_RETURN_IF_ERROR(in.Expect('['));
    std::vector<int64_t> dims;
    int64_t product = 1;
    while (!in.Accept(']')) {
      if (!dims.empty()) KILN_RETURN_IF_ERROR(in.Expect(','));
      KILN_ASSIGN_OR_RETURN(int64_t size, in.Integer());
      if (size <= 0 || size > kMaxMeshDevices / product) return in.Error("a bad iota dimension");
      product *= size;
      dims.push_back(size);
    }
    if (product != count) return in.Error("the iota's size differs from the tiles'");
    std::vector<int64_t> perm(dims.size());
    for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int64_t>(i);
    if (in.AcceptWord("T")) {
      KILN_RETURN_IF_ERROR(in.Expect('('));
      perm.clear();
      while (!in.Accept(')')) {
        if (!perm.empty()) KILN_RETURN_IF_ERROR(in.Expect(','));
        KILN_ASSIGN_OR_RETURN(int64_t axis, in.Integer());
        perm.push_back(axis);
      }
      std::vector<int64_t> sorted = perm;
      std::sort(sorted.begin(), sorted.end());
      bool permutation = sorted.size() == dims.size();
      for (size_t i = 0; permutation && i < sorted.size(); ++i) {
        permutation = sorted[i] == static_cast<int64_t>(i);
      }
      if (!permutation) return in.Error("T(...) is not a permutation of the iota's dimensions");
    }
    // Element i of the transposed array, in row-major order.
    std::vector<int64_t> strides(dims.size(), 1);
    for (size_t d = dims.size(); d-- > 1;) strides[d - 1] = strides[d] * dims[d];
    for (int64_t i = 0; i < count; ++i) {
      int64_t rest = i;
      int64_t source = 0;
      for (size_t k = perm.size(); k-- > 0;) {
        const auto axis = static_cast<size_t>(perm[k]);
        source += (rest % dims[axis]) * strides[axis];
        rest /= dims[axis];
      }
      devices.push_back(source);
    }
  } else {
    std::vector<bool> seen(static_cast<size_t>(count), false);
    for (int64_t i = 0; i < count; ++i) {
      if (i > 0) KILN_RETURN_IF_ERROR(in.Expect(','));
      KILN_ASSIGN_OR_RETURN(int64_t id, in.Integer());
      if (id < 0 || id >= count || seen[static_cast<size_t>(id)]) {
        return in.Error(StrCat("device ", id, " twice or outside 0..", count - 1));
      }
      seen[static_cast<size_t>(id)] = true;
      devices.push_back(id);
    }
  }
  // Trailing tile dimensions that split no tensor dimension: devices
  // holding the same tile (replicated) or, in a shard_map nested in
  // another, each the value of its own manual region (manual).
  std::vector<std::string> subgroups;
  while (!in.Accept('}')) {
    if (in.AcceptWord("last_tile_dim_replicate")) {
      subgroups = {"_r"};
    } else if (in.AcceptWord("last_tile_dims")) {
      KILN_RETURN_IF_ERROR(in.Expect('='));
      KILN_RETURN_IF_ERROR(in.Expect('{'));
      subgroups.clear();
      while (!in.Accept('}')) {
        if (!subgroups.empty()) KILN_RETURN_IF_ERROR(in.Expect(','));
        if (in.AcceptWord("replicated")) {
          subgroups.push_back("_r");
        } else if (in.AcceptWord("manual")) {
          subgroups.push_back("_m");
        } else {
          return Unimplemented("GSPMD sharding subgroups other than replicated and manual: `", text,
                               "`");
        }
      }
    } else if (in.AcceptWord("metadata")) {
      KILN_RETURN_IF_ERROR(in.Expect('='));
      in.SkipItem();
      if (in.Peek('}')) continue;
      KILN_RETURN_IF_ERROR(in.Expect('}'));
      break;
    } else {
      return in.Error("unexpected text in an HloSharding");
    }
  }
  if (subgroups.size() > tiles.size() || subgroups.size() > 2) {
    return in.Error(StrCat(subgroups.size(), " subgroup dimensions of ", tiles.size()));
  }
  TensorSharding sharding;
  const size_t rank = tiles.size() - subgroups.size();
  for (size_t k = 0; k < tiles.size(); ++k) {
    const bool subgroup = k >= rank;
    sharding.mesh.axes.push_back(subgroup ? subgroups[k - rank] : StrCat("_", k));
    sharding.mesh.sizes.push_back(tiles[k]);
    if (subgroup) continue;
    sharding.dims.emplace_back();
    if (tiles[k] > 1) sharding.dims.back().push_back(AxisRef{StrCat("_", k), 1, 0});
  }
  sharding.mesh.device_ids = std::move(devices);
  if (sharding.IsReplicated()) return std::optional<TensorSharding>();
  return std::optional<TensorSharding>(std::move(sharding));
}

TileAssignment AssignTiles(const TensorSharding& sharding) {
  const Mesh& mesh = sharding.mesh;
  const size_t rank = sharding.dims.size();
  TileAssignment out;
  int64_t count = 1;
  for (size_t d = 0; d < rank; ++d) {
    out.tiles.push_back(sharding.Tiles(d));
    count *= out.tiles.back();
  }
  // The unreduced axes in mesh order (JAX lists them as a set).
  std::vector<AxisRef> unreduced = sharding.unreduced;
  std::sort(unreduced.begin(), unreduced.end(), [&](const auto& a, const auto& b) {
    return std::pair(mesh.AxisIndex(a.name), a.pre_size) <
           std::pair(mesh.AxisIndex(b.name), b.pre_size);
  });
  int64_t partials = 1;
  for (const AxisRef& ref : unreduced) partials *= sharding.SizeOf(ref);
  const int64_t replicas = mesh.num_devices() / (count * partials);
  std::vector<std::vector<std::pair<int64_t, int64_t>>> holders(static_cast<size_t>(count));
  for (int64_t position = 0; position < mesh.num_devices(); ++position) {
    const int64_t device = mesh.device_ids.empty() ? position
                                                   : mesh.device_ids[static_cast<size_t>(position)];
    std::vector<int64_t> coordinates = *mesh.CoordinatesOf(device);
    int64_t tile = 0;
    for (size_t d = 0; d < rank; ++d) tile = tile * out.tiles[d] + sharding.TileOf(d, coordinates);
    int64_t partial = 0;
    for (const AxisRef& ref : unreduced) {
      partial = partial * sharding.SizeOf(ref) + sharding.CoordinateOf(ref, coordinates);
    }
    holders[static_cast<size_t>(tile)].emplace_back(partial, device);
  }
  for (auto& list : holders) {
    std::stable_sort(list.begin(), list.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [partial, device] : list) out.devices.push_back(device);
  }
  if (partials > 1) {
    out.tiles.push_back(partials);
    out.partial = true;
  }
  if (replicas > 1) {
    out.tiles.push_back(replicas);
    out.replicated = true;
  }
  return out;
}

std::string HloShardingText(const std::optional<TensorSharding>& sharding) {
  if (!sharding || sharding->IsReplicated()) return "{replicated}";
  const TileAssignment assigned = AssignTiles(*sharding);
  auto join = [](const std::vector<int64_t>& values) {
    std::string text;
    for (int64_t value : values) text += (text.empty() ? "" : ",") + std::to_string(value);
    return text;
  };
  std::string text = "{devices=[" + join(assigned.tiles) + "]" + join(assigned.devices);
  if (assigned.partial) {
    text += assigned.replicated ? " last_tile_dims={unreduced, replicated}"
                                : " last_tile_dims={unreduced}";
  } else if (assigned.replicated) {
    text += " last_tile_dim_replicate";
  }
  return text + "}";
}

std::optional<TensorSharding> OnMesh(const TensorSharding& sharding, const Mesh& mesh) {
  const int64_t count = mesh.num_devices();
  if (!sharding.unreduced.empty() || sharding.mesh.num_devices() != count) return std::nullopt;
  // Each device's coordinates in both meshes, by its position in `mesh`.
  std::vector<int64_t> position_in_own(static_cast<size_t>(count), -1);
  for (int64_t p = 0; p < count; ++p) {
    const int64_t device = sharding.mesh.device_ids.empty()
                               ? p
                               : sharding.mesh.device_ids[static_cast<size_t>(p)];
    if (device < 0 || device >= count) return std::nullopt;
    position_in_own[static_cast<size_t>(device)] = p;
  }
  auto coordinates = [](const Mesh& of, int64_t position) {
    std::vector<int64_t> out(of.axes.size());
    for (size_t a = of.axes.size(); a-- > 0;) {
      out[a] = position % of.sizes[a];
      position /= of.sizes[a];
    }
    return out;
  };
  std::vector<std::vector<int64_t>> own, theirs;
  for (int64_t p = 0; p < count; ++p) {
    const int64_t device = mesh.device_ids.empty() ? p : mesh.device_ids[static_cast<size_t>(p)];
    if (device < 0 || device >= count || position_in_own[static_cast<size_t>(device)] < 0) {
      return std::nullopt;
    }
    own.push_back(coordinates(sharding.mesh, position_in_own[static_cast<size_t>(device)]));
    theirs.push_back(coordinates(mesh, p));
  }
  TensorSharding out = sharding;
  out.mesh = mesh;
  out.dims.assign(sharding.dims.size(), {});
  std::vector<bool> used(mesh.axes.size(), false);
  std::vector<size_t> sequence;
  // Whether the axes in `sequence`, then more of them, give dimension d's
  // tiles of `tiles` (a depth-first search over at most three axes).
  std::function<bool(size_t, int64_t, int64_t)> search = [&](size_t d, int64_t tiles,
                                                             int64_t product) {
    if (product == tiles) {
      for (size_t p = 0; p < own.size(); ++p) {
        int64_t tile = 0;
        for (size_t a : sequence) tile = tile * mesh.sizes[a] + theirs[p][a];
        if (tile != sharding.TileOf(d, own[p])) return false;
      }
      return true;
    }
    if (sequence.size() == 3) return false;
    for (size_t a = 0; a < mesh.axes.size(); ++a) {
      if (used[a] || mesh.sizes[a] <= 1 || tiles % (product * mesh.sizes[a]) != 0) continue;
      used[a] = true;
      sequence.push_back(a);
      if (search(d, tiles, product * mesh.sizes[a])) return true;
      sequence.pop_back();
      used[a] = false;
    }
    return false;
  };
  for (size_t d = 0; d < sharding.dims.size(); ++d) {
    const int64_t tiles = sharding.Tiles(d);
    if (tiles == 1) continue;
    sequence.clear();
    if (!search(d, tiles, 1)) return std::nullopt;
    for (size_t a : sequence) out.dims[d].push_back(AxisRef{mesh.axes[a], 1, 0});
  }
  return out;
}

std::optional<Mesh> CommonMesh(std::span<const TensorSharding> shardings) {
  std::vector<Mesh> candidates;
  for (const TensorSharding& sharding : shardings) {
    Mesh mesh;
    for (size_t a = 0; a < sharding.mesh.axes.size(); ++a) {
      if (sharding.mesh.sizes[a] <= 1) continue;
      mesh.axes.push_back(StrCat("_g", mesh.axes.size()));
      mesh.sizes.push_back(sharding.mesh.sizes[a]);
    }
    mesh.device_ids = sharding.mesh.device_ids;
    candidates.push_back(std::move(mesh));
  }
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const Mesh& a, const Mesh& b) { return a.axes.size() > b.axes.size(); });
  for (const Mesh& candidate : candidates) {
    bool fits = true;
    for (const TensorSharding& sharding : shardings) {
      fits = fits && OnMesh(sharding, candidate).has_value();
    }
    if (fits) return candidate;
  }
  return std::nullopt;
}

std::vector<std::vector<int64_t>> GroupsAlong(const Mesh& mesh, std::span<const AxisRef> axes) {
  TensorSharding along;  // one "dimension" split over `axes`
  along.mesh = mesh;
  along.dims.emplace_back(axes.begin(), axes.end());
  // The part of each coordinate the axes do not cover names the group.
  std::map<std::vector<int64_t>, std::vector<std::pair<int64_t, int64_t>>> members;
  for (int64_t device = 0; device < mesh.num_devices(); ++device) {
    const int64_t id = mesh.device_ids.empty() ? device
                                               : mesh.device_ids[static_cast<size_t>(device)];
    std::vector<int64_t> coordinates = *mesh.CoordinatesOf(id);
    std::vector<int64_t> key = coordinates;
    for (const AxisRef& ref : axes) {
      const auto axis = static_cast<size_t>(mesh.AxisIndex(ref.name));
      const int64_t minor = ref.size == 0 ? 1 : mesh.sizes[axis] / (ref.pre_size * ref.size);
      key[axis] -= along.CoordinateOf(ref, coordinates) * minor;
    }
    members[key].emplace_back(along.TileOf(0, coordinates), id);
  }
  std::vector<std::vector<int64_t>> lists;
  for (auto& [key, list] : members) {
    std::sort(list.begin(), list.end());
    std::vector<int64_t> ids;
    for (const auto& member : list) ids.push_back(member.second);
    lists.push_back(std::move(ids));
  }
  return lists;
}

}  // namespace kiln::compiler
