#include "compiler/compile.h"

#include <algorithm>
#include <functional>
#include <set>
#include <string>
#include <variant>

#include "base/env.h"
#include "compiler/inline_calls.h"
#include "compiler/lowering.h"
#include "compiler/on_tiles.h"
#include "compiler/plan_listing.h"
#include "ir/op_description.h"
#include "ir/op_names.h"
#include "ir/printer.h"

namespace kiln::compiler {
namespace {

// The function a program runs: the public `main`, else the only function.
StatusOr<const ir::Operation*> EntryFunction(const ir::Module& module) {
  const ir::Operation* only = nullptr;
  int functions = 0;
  for (const auto& op : module.body().operations()) {
    if (op->code() != ir::OpCode::kFuncFunc) continue;
    ++functions;
    only = op.get();
    ir::Attribute name = op->GetAttr("sym_name");
    if (name.Is(ir::AttrKind::kString) && name->text == "main") return op.get();
  }
  if (functions == 1) return only;
  return InvalidArgument("the module has ", functions,
                         " functions and none is called main; expected an entry function "
                         "@main");
}

uint64_t Fnv1a(std::string_view text, uint64_t hash = 1469598103934665603ull) {
  for (char c : text) hash = (hash ^ static_cast<uint8_t>(c)) * 1099511628211ull;
  return hash;
}

// The compile options that shape the program, as text for its fingerprint.
// Not their serialized bytes, nor where the program runs: jaxlib's bytes
// and device assignment differ between the processes of a job
// (executable_build_options carries process_index; a jit on one device
// runs on each process's own), and every process must compute the same
// fingerprint for the same program (JAX derives launch ids from it). XLA's
// CPU client likewise fingerprints the program alone.
std::string FingerprintedOptions(const frontend::CompileOptions& options) {
  std::string text = StrCat("replicas=", options.num_replicas,
                            ";partitions=", options.num_partitions,
                            ";spmd=", options.use_spmd_partitioning ? 1 : 0,
                            ";shardy=", options.use_shardy_partitioner ? 1 : 0);
  for (const frontend::OptionOverride& option : options.option_overrides) {
    text += StrCat(";", option.name, "=");
    std::visit([&](const auto& value) { text += StrCat(value); }, option.value);
  }
  return text;
}

// The memory each value lives in: a view's root value, else the value itself.
size_t MemoryRoot(const Graph& graph, ValueId value) {
  const Placement& place = graph.placements[static_cast<size_t>(value)];
  return place.storage == Storage::kAlias ? static_cast<size_t>(place.index)
                                          : static_cast<size_t>(value);
}

// Ops whose kernels compute output element k from input elements k only,
// reading each before writing it, so an output may share an input's memory.
bool IsPointwise(std::string_view name) {
  return ir::DescribeOp(ir::LookupOpCode(name)).Has(ir::kPointwise);
}

// Whether `node` may write its output `output` over the memory `memory`
// that it also reads: a view copies nothing; a pointwise op reads element k
// before writing it, when the inputs reading that memory line up with the
// output element for element.
bool SafeInPlace(const Graph& graph, const Node& node, ValueId output, size_t memory) {
  if (node.output_aliases_input) return true;
  // A node that may write this output over one of its inputs (a scatter's
  // or dynamic_update_slice's operand, a while loop's carry) when that
  // input is the memory and no other input reads it: `.at[i].set(v)` on a
  // donated array (a KV cache's update) costs its window, not a copy.
  const auto at = std::find(node.outputs.begin(), node.outputs.end(), output);
  const auto k = static_cast<size_t>(at - node.outputs.begin());
  if (at != node.outputs.end() && k < node.output_over_input.size() &&
      node.output_over_input[k] >= 0) {
    const auto over = static_cast<size_t>(node.output_over_input[k]);
    bool alone = over < node.inputs.size() && MemoryRoot(graph, node.inputs[over]) == memory;
    for (size_t i = 0; i < node.inputs.size() && alone; ++i) {
      alone = i == over || MemoryRoot(graph, node.inputs[i]) != memory;
    }
    if (alone) return true;
  }
  const bool fused = node.op == kFusionOp;
  if (!fused && !IsPointwise(node.op)) return false;
  const Shape& out = graph.shape(output);
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const ValueId in = node.inputs[i];
    if (MemoryRoot(graph, in) != memory) continue;
    // A fused loop writes each tile after reading it, except what its
    // strided reads (broadcasts, transposes) read from elsewhere.
    if (fused && !node.inputs_read_pointwise[i]) return false;
    const Shape& shape = graph.shape(in);
    if (GetElementTypeInfo(shape.element_type).storage_bytes !=
            GetElementTypeInfo(out.element_type).storage_bytes ||
        shape.NumElements() != out.NumElements()) {
      return false;
    }
  }
  return true;
}

// Whether result `result` can be written into parameter `parameter`'s memory
// without changing what the plan reads: every read of the parameter (by a
// node, or by the copies of results made after the last node) comes before
// the write. A view node writing its own input's memory copies nothing.
bool CanWriteInPlace(const Graph& graph, size_t parameter, size_t result) {
  const size_t memory = MemoryRoot(graph, graph.parameters[parameter]);
  int64_t last_read = -1;
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    for (ValueId in : graph.nodes[n].inputs) {
      if (MemoryRoot(graph, in) == memory) last_read = static_cast<int64_t>(n);
    }
  }
  // Results not written by a node are copied after the last node, in order.
  bool read_at_end = false;
  for (size_t k = 0; k < graph.results.size(); ++k) {
    const ValueId value = graph.results[k];
    const bool copied = graph.placements[static_cast<size_t>(value)].storage != Storage::kResult;
    if (copied && k != result && MemoryRoot(graph, value) == memory) read_at_end = true;
  }
  if (read_at_end) return false;
  const ValueId written = graph.results[result];
  if (graph.placements[static_cast<size_t>(written)].storage != Storage::kResult) return true;
  // An intermediate placed in the result's buffer (PlanBuffers) writes it
  // before the result's own node: the result gets memory of its own.
  for (size_t v = 0; v < graph.placements.size(); ++v) {
    const Placement& placement = graph.placements[v];
    if (static_cast<ValueId>(v) != written && placement.storage == Storage::kResult &&
        placement.index == static_cast<int64_t>(result)) {
      return false;
    }
  }
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const Node& node = graph.nodes[n];
    if (std::find(node.outputs.begin(), node.outputs.end(), written) == node.outputs.end()) {
      continue;
    }
    const auto at = static_cast<int64_t>(n);
    return last_read < at || (last_read == at && SafeInPlace(graph, node, written, memory));
  }
  return false;
}

// Programs whose flops + 20 x transcendentals + bytes accessed stay below
// this run on the caller's thread when their device is idle: up to about a
// hundred microseconds of work (a 128^3 product, 4.2M; x * 2 + 1 over
// 262,144 floats, 4.7M). Handing a call to the device's worker and the
// result back costs two thread wake-ups, tens of microseconds on a VM, and
// a caller that blocks on the result gains nothing from the handoff.
// Through JAX (medians of alternating runs), x * 2 + 1 over 16,384 floats
// took 32-65 us with a limit of 64K and 28-34 us inline (XLA 14-16); over
// 65,536 floats 73 us with a limit of 1M and 38 us with this one (XLA 96);
// the 128^3 product went from 1.10 to 0.79 of XLA's time. Larger programs
// still go to the worker, so that a framework dispatching ahead (JAX traces
// the next step meanwhile) is not held up by them.
constexpr double kInlineCost = 8 * 1024 * 1024;

// Whether `graph` or a region in it has a node whose side effects keep the
// program off the caller's thread (feeds, send/recv, host callbacks).
bool HasSideEffects(const Graph& graph) {
  for (const Node& node : graph.nodes) {
    if (node.has_side_effects && !node.side_effects_run_inline) return true;
    for (const auto& region : node.regions) {
      if (HasSideEffects(*region)) return true;
    }
  }
  return false;
}

// Whether running `graph` runs more than one node. A node's regions count
// together: a while loop whose condition and body are one node each runs
// two per iteration.
bool RunsSeveralNodes(const Graph& graph) {
  if (graph.nodes.size() > 1) return true;
  for (const Node& node : graph.nodes) {
    size_t nodes = 0;
    for (const auto& region : node.regions) {
      if (RunsSeveralNodes(*region)) return true;
      nodes += region->nodes.size();
    }
    if (nodes > 1) return true;
  }
  return false;
}

// Reads the entry function's donation attributes into `program`.
// The results an argument names in tf.aliasing_output: their buffers may be
// that argument's memory, so the buffer plan keeps intermediates out of
// them. Out-of-range indexes are PlanDonation's to reject.
std::vector<bool> AliasedResults(const ir::Operation& entry, size_t results) {
  std::vector<bool> aliased(results, false);
  ir::Attribute arg_attrs = entry.GetAttr("arg_attrs");
  if (!arg_attrs.Is(ir::AttrKind::kArray)) return aliased;
  for (const ir::Attribute& attrs : arg_attrs->elements) {
    if (!attrs.Is(ir::AttrKind::kDictionary)) continue;
    ir::Attribute alias = attrs.Get("tf.aliasing_output");
    if (alias.Is(ir::AttrKind::kInteger) && alias->int_value >= 0 &&
        alias->int_value < static_cast<int64_t>(results)) {
      aliased[static_cast<size_t>(alias->int_value)] = true;
    }
  }
  return aliased;
}

Status PlanDonation(const ir::Operation& entry, const Graph& graph, Program& program) {
  const size_t count = graph.parameters.size();
  program.parameter_donatable.assign(count, false);
  program.parameter_aliased_result.assign(count, -1);
  program.alias_in_place.assign(count, false);
  ir::Attribute arg_attrs = entry.GetAttr("arg_attrs");
  if (!arg_attrs.Is(ir::AttrKind::kArray)) return Status::Ok();
  std::vector<int> aliased_by(graph.results.size(), -1);
  for (size_t i = 0; i < count && i < arg_attrs->elements.size(); ++i) {
    const ir::Attribute& attrs = arg_attrs->elements[i];
    if (!attrs.Is(ir::AttrKind::kDictionary)) continue;
    ir::Attribute donor = attrs.Get("jax.buffer_donor");
    if (donor.Is(ir::AttrKind::kBool) && donor->bool_value) program.parameter_donatable[i] = true;
    ir::Attribute alias = attrs.Get("tf.aliasing_output");
    if (!alias) continue;
    if (!alias.Is(ir::AttrKind::kInteger) || alias->int_value < 0 ||
        alias->int_value >= static_cast<int64_t>(graph.results.size())) {
      return InvalidArgument("argument ", i, "'s tf.aliasing_output must be a result index below ",
                             graph.results.size());
    }
    const auto result = static_cast<size_t>(alias->int_value);
    const Shape& from = graph.shape(graph.parameters[i]);
    const Shape& to = graph.shape(graph.results[result]);
    if (from.element_type != to.element_type || from.dims != to.dims) {
      return InvalidArgument("argument ", i, " (", from.ToString(), ") is aliased with result ",
                             result, " (", to.ToString(), "); aliased values must have one type");
    }
    if (aliased_by[result] >= 0) {
      return InvalidArgument("arguments ", aliased_by[result], " and ", i,
                             " are both aliased with result ", result);
    }
    aliased_by[result] = static_cast<int>(i);
    program.parameter_donatable[i] = true;
    program.parameter_aliased_result[i] = static_cast<int>(result);
    program.alias_in_place[i] = CanWriteInPlace(graph, i, result);
  }
  return Status::Ok();
}

// Whether a collective runs anywhere in `graph` or its regions.
bool UsesCollectives(const Graph& graph) {
  static constexpr std::string_view kCollectives[] = {"stablehlo.all_reduce",
                                                      "stablehlo.all_gather",
                                                      "stablehlo.reduce_scatter",
                                                      "stablehlo.all_to_all",
                                                      "stablehlo.collective_permute",
                                                      "stablehlo.collective_broadcast",
                                                      "stablehlo.collective_reduce",
                                                      "kiln.spmd_gather",
                                                      kSharedHostRecv};
  for (const Node& node : graph.nodes) {
    if (std::find(std::begin(kCollectives), std::end(kCollectives), node.op) !=
        std::end(kCollectives)) {
      return true;
    }
    for (const auto& region : node.regions) {
      if (UsesCollectives(*region)) return true;
    }
  }
  return false;
}

std::string_view OpaqueText(const ir::Attribute& attribute) {
  return attribute.Is(ir::AttrKind::kOpaque) ? std::string_view(attribute->text)
                                             : std::string_view();
}

// The `sdy.sharding` of each entry argument or result (`attrs`: arg_attrs
// or res_attrs).
StatusOr<std::vector<std::optional<TensorSharding>>> ShardingsOf(const ir::Attribute& attrs,
                                                                 size_t count,
                                                                 const MeshTable& meshes) {
  std::vector<std::optional<TensorSharding>> shardings(count);
  if (!attrs.Is(ir::AttrKind::kArray)) return shardings;
  for (size_t i = 0; i < count && i < attrs->elements.size(); ++i) {
    ir::Attribute sharding = attrs->elements[i].Is(ir::AttrKind::kDictionary)
                                 ? attrs->elements[i].Get("sdy.sharding")
                                 : ir::Attribute();
    if (!sharding) continue;
    KILN_ASSIGN_OR_RETURN(shardings[i], ParseSharding(OpaqueText(sharding), meshes));
  }
  return shardings;
}

// The `mhlo.sharding` of each entry argument or result (GSPMD).
StatusOr<std::vector<std::optional<TensorSharding>>> HloShardingsOf(const ir::Attribute& attrs,
                                                                    size_t count,
                                                                    const Spmd& spmd) {
  std::vector<std::optional<TensorSharding>> shardings(count);
  if (!attrs.Is(ir::AttrKind::kArray)) return shardings;
  for (size_t i = 0; i < count && i < attrs->elements.size(); ++i) {
    ir::Attribute sharding = attrs->elements[i].Is(ir::AttrKind::kDictionary)
                                 ? attrs->elements[i].Get("mhlo.sharding")
                                 : ir::Attribute();
    if (!sharding.Is(ir::AttrKind::kString)) continue;
    KILN_ASSIGN_OR_RETURN(shardings[i], ReadHloSharding(sharding->text, spmd));
    // `{replicated}` (or maximal) names the value whole: a result so named
    // stays whole even where the program holds its tiles (nullopt would
    // leave it to the compiler).
    if (!shardings[i]) shardings[i] = TensorSharding();
  }
  return shardings;
}

// The mesh every `mhlo.sharding` of a GSPMD program fits (CommonMesh): of
// the entry's arguments and results and of every op. nullopt where there
// is none, or the program has manual regions (their shardings name the
// devices of other manual tiles, which lower_spmd.cc reads by their own
// meshes).
std::optional<Mesh> CommonGspmdMesh(const ir::Module& module, const ir::Operation& entry,
                                    int64_t partitions) {
  std::vector<TensorSharding> shardings;
  std::set<std::string> seen;  // (a program repeats a few shardings many times)
  bool usable = true;
  auto add = [&](const ir::Attribute& text) {
    if (!usable || !text.Is(ir::AttrKind::kString) || !seen.insert(text->text).second) return;
    if (text->text.find("manual") != std::string::npos) {
      usable = false;
      return;
    }
    StatusOr<std::optional<TensorSharding>> parsed = ParseHloSharding(text->text, partitions);
    if (!parsed.ok()) {
      usable = false;  // reported where it is read
    } else if (*parsed) {
      shardings.push_back(std::move(**parsed));
    }
  };
  for (const char* attrs : {"arg_attrs", "res_attrs"}) {
    ir::Attribute list = entry.GetAttr(attrs);
    if (!list.Is(ir::AttrKind::kArray)) continue;
    for (const ir::Attribute& each : list->elements) {
      if (each.Is(ir::AttrKind::kDictionary)) add(each.Get("mhlo.sharding"));
    }
  }
  std::function<void(const ir::Operation&)> visit = [&](const ir::Operation& op) {
    add(op.GetAttr("mhlo.sharding"));
    for (size_t r = 0; r < op.num_regions(); ++r) {
      for (size_t b = 0; b < op.region(r).num_blocks(); ++b) {
        for (const auto& inner : op.region(r).block(b).operations()) visit(*inner);
      }
    }
  };
  for (const auto& op : module.body().operations()) visit(*op);
  if (!usable || shardings.empty()) return std::nullopt;
  return CommonMesh(shardings);
}

// `meshes` refined by the sub-axes the module's shardings name
// (RefineMesh): those of `sdy.sharding` attributes (#sdy.sharding,
// #sdy.sharding_per_value, anywhere, in dictionaries and lists too) and of
// collectives' `replica_group_mesh_axes`. Text that does not read is left
// to the op that reads it, which reports it.
void RefineMeshes(const ir::Module& module, MeshTable& meshes) {
  std::vector<std::pair<Mesh, AxisRef>> used;  // (the mesh, a sub-axis of it)
  std::set<std::string> seen;
  auto add = [&](const TensorSharding& sharding) {
    auto note = [&](const AxisRef& ref) {
      if (ref.pre_size != 1 || ref.size != 0) used.emplace_back(sharding.mesh, ref);
    };
    for (const auto& axes : sharding.dims) std::for_each(axes.begin(), axes.end(), note);
    std::for_each(sharding.unreduced.begin(), sharding.unreduced.end(), note);
  };
  std::function<void(const ir::Attribute&)> scan = [&](const ir::Attribute& attribute) {
    if (!attribute) return;
    switch (attribute.kind()) {
      case ir::AttrKind::kOpaque: {
        const std::string& text = attribute->text;
        if (text.find(":(") == std::string::npos || !seen.insert(text).second) return;
        if (text.find("sharding_per_value") != std::string::npos) {
          if (auto parsed = ParseShardingPerValue(text, meshes); parsed.ok()) {
            std::for_each(parsed->begin(), parsed->end(), add);
          }
        } else if (text.find("#sdy.sharding") != std::string::npos) {
          if (auto parsed = ParseSharding(text, meshes); parsed.ok()) add(*parsed);
        }
        return;
      }
      case ir::AttrKind::kArray:
        std::for_each(attribute->elements.begin(), attribute->elements.end(), scan);
        return;
      case ir::AttrKind::kDictionary:
      case ir::AttrKind::kStruct: {
        // replica_group_mesh_axes: mesh = @m, axes = [{name, sub_axis_info}]
        ir::Attribute mesh = attribute.Get("mesh");
        ir::Attribute axes = attribute.Get("axes");
        if (mesh.Is(ir::AttrKind::kSymbolRef) && !mesh->symbol_path.empty() &&
            axes.Is(ir::AttrKind::kArray)) {
          auto found = meshes.find(mesh->symbol_path.back());
          for (const ir::Attribute& ref : axes->elements) {
            ir::Attribute name = ref.Get("name");
            ir::Attribute info = ref.Get("sub_axis_info");
            ir::Attribute pre = info ? info.Get("pre_size") : ir::Attribute();
            ir::Attribute size = info ? info.Get("size") : ir::Attribute();
            if (found == meshes.end() || !name.Is(ir::AttrKind::kString) ||
                !pre.Is(ir::AttrKind::kInteger) || !size.Is(ir::AttrKind::kInteger)) {
              continue;
            }
            used.emplace_back(found->second, AxisRef{name->text, pre->int_value, size->int_value});
          }
        }
        for (const ir::NamedAttribute& field : attribute->fields) scan(field.value);
        return;
      }
      default: return;
    }
  };
  std::function<void(const ir::Operation&)> visit = [&](const ir::Operation& op) {
    for (const ir::NamedAttribute& attribute : op.attributes()) scan(attribute.value);
    for (size_t r = 0; r < op.num_regions(); ++r) {
      for (size_t b = 0; b < op.region(r).num_blocks(); ++b) {
        for (const auto& inner : op.region(r).block(b).operations()) visit(*inner);
      }
    }
  };
  for (const auto& op : module.body().operations()) visit(*op);
  if (used.empty()) return;
  for (auto& [name, mesh] : meshes) {
    std::vector<AxisRef> cuts;
    for (const auto& [over, ref] : used) {
      if (on_tiles::SameMesh(over, mesh)) cuts.push_back(ref);
    }
    if (!cuts.empty()) mesh = RefineMesh(mesh, cuts);
  }
}

// A GSPMD result the program gives no sharding is whole on every device
// where the options do not let the partitioner choose one
// (allow_spmd_sharding_propagation_to_output false for it; one flag stands
// for every result). Where the options do not say,
// Kiln chooses, as for JAX's results without out_shardings. (XLA's Shardy
// pipeline chooses whatever the flag says; so does Kiln for sdy programs.)
void KeepWholeWithoutPropagation(const frontend::CompileOptions& options,
                                 std::vector<std::optional<TensorSharding>>& results) {
  const std::vector<bool>& allowed = options.propagation_to_output;
  if (allowed.empty()) return;  // (a serialized list is never empty)
  for (size_t r = 0; r < results.size(); ++r) {
    const bool allow = allowed.size() == 1 ? allowed[0] : r < allowed.size() && allowed[r];
    if (!results[r] && !allow) results[r] = TensorSharding();
  }
}

// How `entry` is partitioned: from the module's sdy meshes and the entry's
// shardings; nullopt for a program without meshes.
StatusOr<std::optional<Spmd>> PlanSpmd(const ir::Module& module, const ir::Operation& entry,
                                       const frontend::CompileOptions& options) {
  Spmd spmd;
  spmd.num_replicas = std::max<int64_t>(1, options.num_replicas);
  spmd.num_partitions = std::max<int64_t>(1, options.num_partitions);
  if (auto mode = GetEnv("KILN_SPMD")) spmd.on_tiles = *mode != "gather";
  for (const auto& op : module.body().operations()) {
    if (op->code() != ir::OpCode::kSdyMesh) continue;
    ir::Attribute name = op->GetAttr("sym_name");
    KILN_ASSIGN_OR_RETURN(Mesh mesh, ParseMesh(OpaqueText(op->GetAttr("mesh"))));
    if (mesh.num_devices() > options.num_partitions && mesh.num_devices() > 1) {
      return InvalidArgument("sdy.mesh @", name.Is(ir::AttrKind::kString) ? name->text : "",
                             " has ", mesh.num_devices(),
                             " devices but the program is compiled "
                             "for ",
                             options.num_partitions, " partitions");
    }
    spmd.meshes.emplace(name.Is(ir::AttrKind::kString) ? name->text : "", std::move(mesh));
  }
  RefineMeshes(module, spmd.meshes);
  const ir::Block& body = entry.region(0).block(0);
  if (spmd.meshes.empty()) {
    if (options.num_partitions <= 1 || !options.use_spmd_partitioning) {
      return std::optional<Spmd>();
    }
    // A GSPMD program (mhlo.sharding, as JAX emits without Shardy and
    // PyTorch/XLA's SPMD mode), or one without any sharding: every value
    // whole on every device unless a sharding says otherwise.
    spmd.gspmd = true;
    spmd.gspmd_mesh = CommonGspmdMesh(module, entry, spmd.num_partitions);
    KILN_ASSIGN_OR_RETURN(spmd.parameters,
                          HloShardingsOf(entry.GetAttr("arg_attrs"), body.num_arguments(), spmd));
    ir::Attribute type = entry.GetAttr("function_type");
    const size_t results = type.Is(ir::AttrKind::kType) ? type->type.results().size() : 0;
    KILN_ASSIGN_OR_RETURN(spmd.results, HloShardingsOf(entry.GetAttr("res_attrs"), results, spmd));
    KeepWholeWithoutPropagation(options, spmd.results);
    return std::optional<Spmd>(std::move(spmd));
  }
  KILN_ASSIGN_OR_RETURN(spmd.parameters,
                        ShardingsOf(entry.GetAttr("arg_attrs"), body.num_arguments(), spmd.meshes));
  ir::Attribute type = entry.GetAttr("function_type");
  const size_t results = type.Is(ir::AttrKind::kType) ? type->type.results().size() : 0;
  KILN_ASSIGN_OR_RETURN(spmd.results,
                        ShardingsOf(entry.GetAttr("res_attrs"), results, spmd.meshes));
  // A result the program leaves unsharded takes the sharding of the op
  // returning it when that op says one (a manual_computation's
  // out_shardings, a sharding_constraint), as XLA's propagation would: the
  // devices then return their tiles.
  const ir::Operation* terminator = body.operations().empty() ? nullptr
                                                              : body.operations().back().get();
  for (size_t r = 0;
       terminator != nullptr && r < spmd.results.size() && r < terminator->operands().size(); ++r) {
    if (spmd.results[r]) continue;
    const ir::Value* value = terminator->operand(r);
    const ir::Operation* producer = value->defining_op();
    if (producer == nullptr) continue;
    if (producer->code() == ir::OpCode::kSdyManualComputation) {
      KILN_ASSIGN_OR_RETURN(std::vector<TensorSharding> out,
                            ParseShardingPerValue(OpaqueText(producer->GetAttr("out_shardings")),
                                                  spmd.meshes));
      const auto index = static_cast<size_t>(value->index());
      // Open dimensions: the lowering holds what the body gives them.
      if (index < out.size() && !out[index].AnyOpen()) {
        spmd.results[r] = std::move(out[index]);
      }
    } else if (producer->code() == ir::OpCode::kSdyShardingConstraint ||
               producer->code() == ir::OpCode::kSdyReshard) {
      KILN_ASSIGN_OR_RETURN(TensorSharding named,
                            ParseSharding(OpaqueText(producer->GetAttr("sharding")), spmd.meshes));
      // An open dimension takes what the value has (the lowering decides);
      // a dimension the axes do not divide leaves the result whole (XLA
      // reports it replicated too).
      const bool even = value->type().HasStaticShape() &&
                        named.LocalDims(value->type().dims()).ok();
      if (!named.AnyOpen() && even) spmd.results[r] = std::move(named);
    }
  }
  return std::optional<Spmd>(std::move(spmd));
}

// The memory kinds of JAX's host offload; XLA's CPU client has these three.
Status CheckMemoryKind(std::string_view kind, std::string_view where) {
  if (kind == "device" || kind == "pinned_host" || kind == "unpinned_host") return Status::Ok();
  return InvalidArgument(where, " asks for memory kind \"", kind,
                         "\"; Kiln's devices have "
                         "\"device\", \"pinned_host\" and \"unpinned_host\"");
}

// The `mhlo.memory_kind` of each entry argument or result (`attrs`:
// arg_attrs or res_attrs); "device" where none is given.
StatusOr<std::vector<std::string>> MemoryKindsOf(const ir::Attribute& attrs, size_t count,
                                                 std::string_view what) {
  std::vector<std::string> kinds(count, "device");
  if (!attrs.Is(ir::AttrKind::kArray)) return kinds;
  for (size_t i = 0; i < count && i < attrs->elements.size(); ++i) {
    if (!attrs->elements[i].Is(ir::AttrKind::kDictionary)) continue;
    ir::Attribute kind = attrs->elements[i].Get("mhlo.memory_kind");
    if (!kind.Is(ir::AttrKind::kString)) continue;
    KILN_RETURN_IF_ERROR(CheckMemoryKind(kind->text, StrCat(what, " ", i)));
    kinds[i] = kind->text;
  }
  return kinds;
}

// The memory kinds of the entry's parameters and results. A result without
// `mhlo.memory_kind` returned straight from an annotate_device_placement
// custom call takes its `_xla_buffer_placement` (jax.device_put(x,
// memory_kind=...) as the last op of a jitted function).
Status PlanMemoryKinds(const ir::Operation& entry, Program& program) {
  const ir::Block& body = entry.region(0).block(0);
  KILN_ASSIGN_OR_RETURN(program.parameter_memory_kinds,
                        MemoryKindsOf(entry.GetAttr("arg_attrs"), body.num_arguments(),
                                      "parameter"));
  const size_t results = program.result_shapes.size();
  KILN_ASSIGN_OR_RETURN(program.result_memory_kinds,
                        MemoryKindsOf(entry.GetAttr("res_attrs"), results, "result"));
  ir::Attribute res_attrs = entry.GetAttr("res_attrs");
  const ir::Operation* terminator = body.operations().empty() ? nullptr
                                                              : body.operations().back().get();
  for (size_t r = 0; terminator != nullptr && r < results && r < terminator->operands().size();
       ++r) {
    const bool given = res_attrs.Is(ir::AttrKind::kArray) && r < res_attrs->elements.size() &&
                       res_attrs->elements[r].Is(ir::AttrKind::kDictionary) &&
                       res_attrs->elements[r].Get("mhlo.memory_kind");
    const ir::Operation* producer = terminator->operand(r)->defining_op();
    if (given || producer == nullptr || producer->code() != ir::OpCode::kCustomCall) continue;
    ir::Attribute target = producer->GetAttr("call_target_name");
    if (!target.Is(ir::AttrKind::kString) || target->text != "annotate_device_placement") continue;
    ir::Attribute frontend = producer->GetAttr("mhlo.frontend_attributes");
    ir::Attribute placement = frontend.Is(ir::AttrKind::kDictionary)
                                  ? frontend.Get("_xla_buffer_placement")
                                  : ir::Attribute();
    if (!placement.Is(ir::AttrKind::kString)) continue;
    KILN_RETURN_IF_ERROR(CheckMemoryKind(placement->text, StrCat("result ", r)));
    program.result_memory_kinds[r] = placement->text;
  }
  return Status::Ok();
}

}  // namespace

StatusOr<std::shared_ptr<const Program>> Compile(const ir::Module& module,
                                                 frontend::CompileOptions options,
                                                 bool keep_unfused) {
  KILN_ASSIGN_OR_RETURN(const ir::Operation* entry, EntryFunction(module));
  KILN_ASSIGN_OR_RETURN(std::optional<Spmd> spmd, PlanSpmd(module, *entry, options));
  auto graph = std::make_shared<Graph>();
  KILN_RETURN_IF_ERROR(Lowering::LowerEntry(module, *entry, *graph, spmd ? &*spmd : nullptr));
  EliminateDeadNodes(*graph);
  std::shared_ptr<const Graph> unfused;
  if (keep_unfused) unfused = std::make_shared<const Graph>(*graph);
  FuseElementwise(*graph);
  PlanBuffers(*graph, /*intermediates_in_results=*/true,
              AliasedResults(*entry, graph->results.size()));
  auto program = std::make_shared<Program>();
  ir::Attribute module_name = module.op().GetAttr("sym_name");
  program->name = module_name.Is(ir::AttrKind::kString) ? module_name->text : "main";
  for (ValueId id : graph->parameters) program->parameter_shapes.push_back(graph->shape(id));
  for (ValueId id : graph->results) program->result_shapes.push_back(graph->shape(id));
  KILN_RETURN_IF_ERROR(PlanDonation(*entry, *graph, *program));
  KILN_RETURN_IF_ERROR(PlanMemoryKinds(*entry, *program));
  program->has_collectives = UsesCollectives(*graph);
  program->cost = AnalyzeCost(module, *entry);
  program->run_inline = !program->has_collectives && !HasSideEffects(*graph) &&
                        program->cost.flops + 20 * program->cost.transcendentals +
                                program->cost.bytes_accessed <
                            kInlineCost;
  program->keep_workers_warm = RunsSeveralNodes(*graph);
  program->partitioned = spmd.has_value();
  if (spmd) {
    program->parameter_shardings = std::move(spmd->parameters);
    program->result_shardings = std::move(spmd->results);
    // Reported as XLA reports a partitioned program: what each device runs.
    // A plan the listing cannot write (a bug) is reported as its module.
    ListedShardings shardings{program->parameter_shardings, program->result_shardings};
    StatusOr<std::string> listing = ListPlan(*graph, module, program->name, spmd->num_partitions,
                                             spmd->num_replicas,
                                             spmd->gspmd ? &shardings : nullptr);
    if (listing.ok()) program->listing = std::move(*listing);
  }
  program->graph = std::move(graph);
  program->unfused_graph = std::move(unfused);
  // Reported as XLA reports an optimized program: calls inlined.
  std::optional<ir::Module> inlined = InlineCalls(module);
  program->text = ir::PrintModule(inlined ? *inlined : module);
  program->fingerprint = Fnv1a(FingerprintedOptions(options), Fnv1a(program->text));
  program->options = std::move(options);
  return std::shared_ptr<const Program>(std::move(program));
}

}  // namespace kiln::compiler
