// Facts about PJRT_Buffer_Type that the buffer tests need.
#include "plugin.h"

namespace conformance {

const std::vector<PJRT_Buffer_Type>& AllElementTypes() {
  static const std::vector<PJRT_Buffer_Type> types = {
      PJRT_Buffer_Type_PRED,       PJRT_Buffer_Type_S8,         PJRT_Buffer_Type_S16,
      PJRT_Buffer_Type_S32,        PJRT_Buffer_Type_S64,        PJRT_Buffer_Type_U8,
      PJRT_Buffer_Type_U16,        PJRT_Buffer_Type_U32,        PJRT_Buffer_Type_U64,
      PJRT_Buffer_Type_F16,        PJRT_Buffer_Type_F32,        PJRT_Buffer_Type_F64,
      PJRT_Buffer_Type_BF16,       PJRT_Buffer_Type_C64,        PJRT_Buffer_Type_C128,
      PJRT_Buffer_Type_F8E5M2,     PJRT_Buffer_Type_F8E4M3FN,   PJRT_Buffer_Type_F8E4M3B11FNUZ,
      PJRT_Buffer_Type_F8E5M2FNUZ, PJRT_Buffer_Type_F8E4M3FNUZ, PJRT_Buffer_Type_S4,
      PJRT_Buffer_Type_U4,         PJRT_Buffer_Type_S2,         PJRT_Buffer_Type_U2,
      PJRT_Buffer_Type_F8E4M3,     PJRT_Buffer_Type_F8E3M4,     PJRT_Buffer_Type_F8E8M0FNU,
      PJRT_Buffer_Type_F4E2M1FN,   PJRT_Buffer_Type_S1,         PJRT_Buffer_Type_U1,
      PJRT_Buffer_Type_F6E2M3FN,   PJRT_Buffer_Type_F6E3M2FN,
  };
  return types;
}

size_t HostElementSize(PJRT_Buffer_Type type) {
  switch (type) {
    case PJRT_Buffer_Type_S16:
    case PJRT_Buffer_Type_U16:
    case PJRT_Buffer_Type_F16:
    case PJRT_Buffer_Type_BF16: return 2;
    case PJRT_Buffer_Type_S32:
    case PJRT_Buffer_Type_U32:
    case PJRT_Buffer_Type_F32: return 4;
    case PJRT_Buffer_Type_S64:
    case PJRT_Buffer_Type_U64:
    case PJRT_Buffer_Type_F64:
    case PJRT_Buffer_Type_C64: return 8;
    case PJRT_Buffer_Type_C128: return 16;
    case PJRT_Buffer_Type_INVALID:
    case PJRT_Buffer_Type_TOKEN: return 0;
    default: return 1;  // PRED, 8-bit types, and sub-byte types one per byte
  }
}

int ElementBits(PJRT_Buffer_Type type) {
  switch (type) {
    case PJRT_Buffer_Type_PRED:
    case PJRT_Buffer_Type_S1:
    case PJRT_Buffer_Type_U1: return 1;
    case PJRT_Buffer_Type_S2:
    case PJRT_Buffer_Type_U2: return 2;
    case PJRT_Buffer_Type_S4:
    case PJRT_Buffer_Type_U4:
    case PJRT_Buffer_Type_F4E2M1FN: return 4;
    case PJRT_Buffer_Type_F6E2M3FN:
    case PJRT_Buffer_Type_F6E3M2FN: return 6;
    default: return static_cast<int>(8 * HostElementSize(type));
  }
}

bool IsSignedSubByteInteger(PJRT_Buffer_Type type) {
  return type == PJRT_Buffer_Type_S1 || type == PJRT_Buffer_Type_S2 || type == PJRT_Buffer_Type_S4;
}

const char* TypeName(PJRT_Buffer_Type type) {
  switch (type) {
    case PJRT_Buffer_Type_INVALID: return "INVALID";
    case PJRT_Buffer_Type_PRED: return "PRED";
    case PJRT_Buffer_Type_S8: return "S8";
    case PJRT_Buffer_Type_S16: return "S16";
    case PJRT_Buffer_Type_S32: return "S32";
    case PJRT_Buffer_Type_S64: return "S64";
    case PJRT_Buffer_Type_U8: return "U8";
    case PJRT_Buffer_Type_U16: return "U16";
    case PJRT_Buffer_Type_U32: return "U32";
    case PJRT_Buffer_Type_U64: return "U64";
    case PJRT_Buffer_Type_F16: return "F16";
    case PJRT_Buffer_Type_F32: return "F32";
    case PJRT_Buffer_Type_F64: return "F64";
    case PJRT_Buffer_Type_BF16: return "BF16";
    case PJRT_Buffer_Type_C64: return "C64";
    case PJRT_Buffer_Type_C128: return "C128";
    case PJRT_Buffer_Type_F8E5M2: return "F8E5M2";
    case PJRT_Buffer_Type_F8E4M3FN: return "F8E4M3FN";
    case PJRT_Buffer_Type_F8E4M3B11FNUZ: return "F8E4M3B11FNUZ";
    case PJRT_Buffer_Type_F8E5M2FNUZ: return "F8E5M2FNUZ";
    case PJRT_Buffer_Type_F8E4M3FNUZ: return "F8E4M3FNUZ";
    case PJRT_Buffer_Type_S4: return "S4";
    case PJRT_Buffer_Type_U4: return "U4";
    case PJRT_Buffer_Type_TOKEN: return "TOKEN";
    case PJRT_Buffer_Type_S2: return "S2";
    case PJRT_Buffer_Type_U2: return "U2";
    case PJRT_Buffer_Type_F8E4M3: return "F8E4M3";
    case PJRT_Buffer_Type_F8E3M4: return "F8E3M4";
    case PJRT_Buffer_Type_F8E8M0FNU: return "F8E8M0FNU";
    case PJRT_Buffer_Type_F4E2M1FN: return "F4E2M1FN";
    case PJRT_Buffer_Type_S1: return "S1";
    case PJRT_Buffer_Type_U1: return "U1";
    case PJRT_Buffer_Type_F6E2M3FN: return "F6E2M3FN";
    case PJRT_Buffer_Type_F6E3M2FN: return "F6E3M2FN";
  }
  return "(not a PJRT_Buffer_Type)";
}

}  // namespace conformance
