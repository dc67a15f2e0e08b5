// Shared by the MLIR bytecode readers (the VHLO reader here, the StableHLO
// reader in frontend/stablehlo): the attribute and type tables of a bytecode
// file, decoded on demand into Kiln IR values, each entry once. Entries refer
// to each other by index; the table resolves them with an explicit stack, so
// neither deep nesting nor cycles in the input can overflow the native stack.
// The dialect decoders (builtin_codec.cc, vhlo_codec.cc, sdy_codec.cc,
// stablehlo/codec.cc) read one entry each through an EntryDecoder; a reader
// names the ones it uses in its Codecs.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "frontend/bytecode/encoding_reader.h"
#include "frontend/bytecode/file.h"
#include "ir/attribute.h"
#include "ir/type.h"

namespace kiln::frontend::vhlo {

// One decoded attribute entry. MLIR keeps attributes and locations in one
// table; an entry is one or the other.
struct AttrEntry {
  ir::Attribute attribute;  // null for a location
  ir::Location location;    // null unless a location
  // Shardy attributes (Opaque text): their kind code and the text Shardy
  // prints for them nested inside another attribute.
  int sdy_kind = -1;
  std::string sdy_body;

  bool is_location() const { return static_cast<bool>(location); }
};

class AttrTypeTable;

// Reads one entry's encoding. References to other entries come back null
// while those are not decoded yet; the reader notes them, may go on reading,
// and the decoder then returns nothing (kPending) so the table decodes them
// first and retries.
class EntryDecoder {
 public:
  // `dialect` and `context` (for messages) must outlive the decoder.
  EntryDecoder(AttrTypeTable& table, const bytecode::File::AttrTypeEntry& entry,
               std::string_view dialect, std::string_view context);

  bytecode::EncodingReader& reader() { return reader_; }
  const bytecode::File& file() const;
  // The entry's dialect name ("builtin", "vhlo", "sdy").
  std::string_view dialect() const { return dialect_; }

  StatusOr<const AttrEntry*> ReadAttribute(std::string_view what);
  // MLIR's optional reference, (index << 1 | present): null with
  // `present` false when absent.
  StatusOr<const AttrEntry*> ReadOptionalAttribute(std::string_view what, bool& present);
  StatusOr<const ir::Type*> ReadType(std::string_view what);
  // A string-table reference.
  StatusOr<std::string_view> ReadString(std::string_view what);
  // varint size, then that many bytes.
  StatusOr<std::span<const uint8_t>> ReadBlob(std::string_view what);

  // An attribute reference that must decode to a non-location attribute.
  StatusOr<const ir::Attribute*> ReadPlainAttribute(std::string_view what);
  // An attribute reference that must decode to a location.
  StatusOr<const ir::Location*> ReadLocation(std::string_view what);

  // Whether some reference read so far is not decoded yet.
  bool pending() const { return pending_; }
  // Accounts for `bytes` of text the entry builds (Shardy attributes, opaque
  // type names). Text can repeat what entries refer to, so a small file could
  // ask for exponentially much; the table's budget is linear in the file size.
  Status ChargeText(size_t bytes);
  // 1 + the deepest nesting among the decoded entries read so far.
  uint32_t depth() const { return child_depth_ + 1; }
  Status Error(std::string_view message) const { return reader_.Error(message); }

 private:
  AttrTypeTable& table_;
  std::string_view dialect_;
  bytecode::EncodingReader reader_;
  bool pending_ = false;
  uint32_t child_depth_ = 0;
};

// What a dialect decoder produced: a value, nothing yet (the decoder's
// pending() references must be decoded first), or an error.
template <typename T>
class Decoded : public StatusOr<std::optional<T>> {
 public:
  Decoded(T value) : StatusOr<std::optional<T>>(std::optional<T>(std::move(value))) {}  // NOLINT
  Decoded(std::nullopt_t) : StatusOr<std::optional<T>>(std::optional<T>()) {}           // NOLINT
  Decoded(Status status) : StatusOr<std::optional<T>>(std::move(status)) {}             // NOLINT
  Decoded(StatusOr<T> result)                                                           // NOLINT
      : StatusOr<std::optional<T>>(result.ok() ? Decoded(std::move(result).value())
                                               : Decoded(result.status())) {}
};
// Returned by a decoder that must wait for referenced entries.
inline constexpr std::nullopt_t kPending = std::nullopt;

// The per-dialect decoders of custom encodings.
Decoded<AttrEntry> DecodeBuiltinAttribute(EntryDecoder& decoder);
Decoded<ir::Type> DecodeBuiltinType(EntryDecoder& decoder);
Decoded<AttrEntry> DecodeVhloAttribute(EntryDecoder& decoder);
Decoded<ir::Type> DecodeVhloType(EntryDecoder& decoder);
// Shardy attributes become Opaque attributes holding their MLIR text.
Decoded<AttrEntry> DecodeSdyAttribute(EntryDecoder& decoder);
// The stablehlo and chlo dialects' own encodings (not VHLO's), as the text
// parser builds their printed forms (stablehlo_codec.cc).
Decoded<AttrEntry> DecodeStablehloAttribute(EntryDecoder& decoder);
Decoded<ir::Type> DecodeStablehloType(EntryDecoder& decoder);
Decoded<AttrEntry> DecodeChloAttribute(EntryDecoder& decoder);
// Entries without a custom encoding, as the VHLO reader keeps them: Opaque
// attributes and types holding their MLIR text (builtin float types by name).
StatusOr<ir::Attribute> TextualAttribute(std::string_view dialect, std::string_view text);
StatusOr<ir::Type> TextualType(std::string_view dialect, std::string_view text);

// The decoders of one dialect's custom encodings; null where the dialect has
// none of that kind.
struct DialectCodec {
  std::string_view dialect;
  Decoded<AttrEntry> (*attribute)(EntryDecoder&) = nullptr;
  Decoded<ir::Type> (*type)(EntryDecoder&) = nullptr;
};

// What a reader decodes: the dialects whose custom encodings it knows (a
// custom entry of any other dialect is UNIMPLEMENTED naming it) and what
// entries stored as MLIR text become.
struct Codecs {
  std::span<const DialectCodec> dialects;
  StatusOr<ir::Attribute> (*textual_attribute)(std::string_view dialect, std::string_view text);
  StatusOr<ir::Type> (*textual_type)(std::string_view dialect, std::string_view text);
};

// The VHLO reader's: builtin, vhlo and sdy encodings, and stablehlo and chlo
// ones (types in Shardy's regions); text kept as Opaque.
const Codecs& VhloCodecs();

class AttrTypeTable {
 public:
  // How deep attributes and types may nest. Real artifacts nest a few levels
  // (locations of deep call stacks a few dozen); the limit keeps the
  // recursive destruction and comparison of IR values shallow.
  static constexpr uint32_t kMaxNesting = 1000;

  // `file` and `codecs` must outlive the table.
  AttrTypeTable(const bytecode::File& file, const Codecs& codecs);

  StatusOr<const AttrEntry*> Entry(uint64_t index);
  // The attribute at `index`; INVALID_ARGUMENT naming `what` (and `where`,
  // e.g. "op vhlo.add_v1 at byte 12") if it is a location.
  StatusOr<ir::Attribute> Attribute(uint64_t index, std::string_view what,
                                    std::string_view where = {});
  // The location at `index`; INVALID_ARGUMENT naming `what` and `where` if it is not one.
  StatusOr<ir::Location> Location(uint64_t index, std::string_view what,
                                  std::string_view where = {});
  StatusOr<ir::Type> Type(uint64_t index);

  const bytecode::File& file() const { return file_; }

 private:
  friend class EntryDecoder;
  enum State : uint8_t { kUnvisited, kInProgress, kDone };
  struct Ref {
    bool is_type;
    uint64_t index;
  };

  // Decodes `ref` and everything it refers to, depth first on an explicit stack.
  Status Resolve(Ref ref);
  // Decodes one entry whose references are all decoded; pushes the missing
  // ones on `stack` otherwise. Sets `done`.
  Status DecodeOne(Ref ref, std::vector<Ref>& stack, bool& done);
  // Hands a custom-encoded entry to its dialect's decoder.
  Status DecodeCustom(Ref ref, EntryDecoder& decoder, std::optional<AttrEntry>& attribute,
                      std::optional<ir::Type>& type);
  const AttrEntry* DecodedAttribute(uint64_t index) const;
  const ir::Type* DecodedType(uint64_t index) const;
  void NoteMissing(Ref ref) { missing_.push_back(ref); }

  const bytecode::File& file_;
  const Codecs& codecs_;
  std::vector<AttrEntry> attributes_;
  std::vector<ir::Type> types_;
  std::vector<State> attribute_states_;
  std::vector<State> type_states_;
  std::vector<uint32_t> attribute_depths_;
  std::vector<uint32_t> type_depths_;
  uint64_t text_budget_;      // bytes of text entries may still build
  std::vector<Ref> missing_;  // references the entry being decoded lacks
};

}  // namespace kiln::frontend::vhlo
