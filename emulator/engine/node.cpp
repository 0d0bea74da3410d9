#include "emulator/engine/node.h"

namespace bai::engine {

const char* state_name(NodeState state) {
    switch (state) {
        case NodeState::preparing: return "preparing";
        case NodeState::idle: return "idle";
        case NodeState::running: return "running";
        case NodeState::leaving: return "leaving";
        case NodeState::unusable: return "unusable";
    }
    return "unknown";
}

}  // namespace bai::engine
