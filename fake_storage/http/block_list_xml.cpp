#include "fake_storage/http/block_list_xml.h"

#include <pugixml.hpp>

#include <cstring>

#include "fake_storage/engine/storage_error.h"

namespace bai::storage {
namespace {

[[noreturn]] void invalid(const std::string& detail) {
    fail(400, "InvalidXmlDocument", "XML specified is not syntactically valid.\n" + detail);
}

}  // namespace

std::vector<BlockRef> parse_block_list(std::string_view xml) {
    pugi::xml_document doc;
    pugi::xml_parse_result parsed = doc.load_buffer(xml.data(), xml.size(), pugi::parse_default,
                                                    pugi::encoding_utf8);
    if (!parsed) invalid(std::string("Reason:") + parsed.description());
    pugi::xml_node root = doc.document_element();
    if (std::strcmp(root.name(), "BlockList") != 0) invalid("The root element must be BlockList.");
    std::vector<BlockRef> blocks;
    for (pugi::xml_node node : root.children()) {
        if (node.type() != pugi::node_element) continue;
        std::string_view name = node.name();
        BlockListType list;
        if (name == "Latest") {
            list = BlockListType::latest;
        } else if (name == "Committed") {
            list = BlockListType::committed;
        } else if (name == "Uncommitted") {
            list = BlockListType::uncommitted;
        } else {
            invalid("Unexpected element " + std::string(name) + " in BlockList.");
        }
        for (pugi::xml_node child : node.children()) {
            if (child.type() == pugi::node_element) invalid("A block id must be text.");
        }
        blocks.push_back({node.text().get(), list});
    }
    return blocks;
}

}  // namespace bai::storage
