//! The models the checker can run, by their catalogue name. This is the
//! only place that lists them: the checker reaches a model through
//! `with_model` and a `ModelVisitor`, generic over `Spec`.

use crate::spec::Spec;

/// Something to do with one model, whichever it is.
pub trait ModelVisitor {
    type Out;
    fn visit<M: Spec>(self) -> Self::Out;
}

/// Every model's catalogue name.
pub fn model_names() -> Vec<&'static str> {
    vec![
        crate::fuse::FuseModel::NAME,
        crate::fuse_gup::GupModel::NAME,
        crate::nowait::NowaitModel::NAME,
    ]
}

/// Runs `v` on the model named `name` (a catalogue's `model = "..."`), or
/// `None` when no model has that name.
pub fn with_model<V: ModelVisitor>(name: &str, v: V) -> Option<V::Out> {
    if name == crate::fuse::FuseModel::NAME {
        return Some(v.visit::<crate::fuse::FuseModel>());
    }
    if name == crate::fuse_gup::GupModel::NAME {
        return Some(v.visit::<crate::fuse_gup::GupModel>());
    }
    if name == crate::nowait::NowaitModel::NAME {
        return Some(v.visit::<crate::nowait::NowaitModel>());
    }
    None
}
