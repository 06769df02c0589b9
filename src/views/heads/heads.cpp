#include "heads/heads.h"

#include "view/viewkinds.h"

// The All heads view (every layer × head at once): its descriptor.
namespace atlas::views::heads {

ViewKind kind()
{
    return {.kind = "heads",
        .title = "All heads",
        .summary = "every layer × head at once",
        .group = "Attention",
        .needs = ViewNeeds::FirstLayerProbs,
        .showsSites = true,
        .showsEncoderDecoder = true,
        .everyHead = true,
        .alsoReads = {"scale"},
        .after = "attention",
        .keys = {{.field = kThumbnailSize,
            .type = "int, 0 or 48 … 1024",
            .meaning = "heads view: each thumbnail's side in pixels, the view scrolling when the grid is larger than "
                       "the window (the view's \"Thumbnails\" box); 0 = fit the view. Once every token gets a row tall "
                       "enough for text, each thumbnail is labelled with its query tokens (left) and key tokens (top)",
            .check =
                [](const ViewSpec &s) {
                    return s.get(kThumbnailSize) != 0
                            && (s.get(kThumbnailSize) < kMinThumbnail || s.get(kThumbnailSize) > kMaxThumbnail)
                        ? "0 (fit the view) or " + std::to_string(kMinThumbnail) + " \u2026 "
                            + std::to_string(kMaxThumbnail) + " pixels"
                        : std::string();
                },
            .ownedByView = true}}};
}

} // namespace atlas::views::heads
