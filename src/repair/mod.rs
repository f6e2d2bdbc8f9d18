//! EKS node auto repair's rules as data: how long a failing node condition must last, what
//! repair does about it, when it holds off and how many nodes it repairs at once. The twin's
//! repair controller acts by them; a repair drill predicts by them what it should see.

pub mod policy;
