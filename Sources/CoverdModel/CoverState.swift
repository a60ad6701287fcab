/// The state of one album's cover (Three20's TTModel, reduced to what a user sees).
public enum CoverState: String, Sendable, CaseIterable {
    case pending, cached, failed
}
