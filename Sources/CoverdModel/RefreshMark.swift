/// What `coverd refresh` asked for a cover (contract §8, TTModel's
/// `invalidate(erase)`): revalidate it now with its validators, or erase it
/// and fetch it anew without them.
public enum RefreshMark: String, Sendable, Equatable, CaseIterable {
    case revalidate
    case erase
}
