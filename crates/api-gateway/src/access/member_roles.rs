//! Who may change whose membership: the rules beyond a route's scope
//! (`crate::authz::ROUTES` lets only `admin` keys, hence only admins and
//! owners, manage members and invitations), in one place.
//!
//! - An owner grants any role and changes or removes any member.
//! - An admin grants roles up to their own (invites and promotes up to
//!   `admin`) but changes or removes only editors and viewers: owners and
//!   other admins are the owners' to manage.
//! - Nobody leaves, is removed or is demoted if that leaves the
//!   organisation without an owner ([`keeps_an_owner`]).

use crate::http::error::ApiError;
use uptime_db::organisations::Role;

/// 403 on `role` unless `actor` may give someone `role` (an invitation, a
/// promotion).
pub fn may_grant(actor: Role, role: Role) -> Result<(), ApiError> {
    let allowed = match actor {
        Role::Owner => true,
        Role::Admin => role <= Role::Admin,
        Role::Editor | Role::Viewer => false,
    };
    if allowed {
        Ok(())
    } else {
        Err(refused(format!(
            "a{} {actor} cannot grant the {role} role{}",
            article(actor),
            if role == Role::Owner {
                "; only owners make owners"
            } else {
                ""
            }
        )))
    }
}

/// 403 on `role` unless `actor` may change the role of, or remove, a
/// member whose role is `target`.
pub fn may_manage(actor: Role, target: Role) -> Result<(), ApiError> {
    let allowed = match actor {
        Role::Owner => true,
        Role::Admin => target < Role::Admin,
        Role::Editor | Role::Viewer => false,
    };
    if allowed {
        Ok(())
    } else {
        Err(refused(format!(
            "a{} {actor} cannot change or remove a{} {target}; only owners manage owners and admins",
            article(actor),
            article(target)
        )))
    }
}

/// 409 on `role` when the change leaves the organisation without an owner:
/// the member is an owner (`target`), is losing the role (`losing`), and
/// is the only one (`owners`).
pub fn keeps_an_owner(target: Role, losing: bool, owners: i64) -> Result<(), ApiError> {
    if target == Role::Owner && losing && owners <= 1 {
        return Err(ApiError::ConflictOn {
            field: "role",
            message: "the organisation's last owner cannot leave, be removed or be demoted; \
                      make another member an owner first (or delete the organisation)"
                .into(),
        });
    }
    Ok(())
}

fn refused(message: String) -> ApiError {
    ApiError::Forbidden {
        field: "role",
        message,
    }
}

fn article(role: Role) -> &'static str {
    if matches!(role, Role::Owner | Role::Admin) {
        "n"
    } else {
        ""
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owners_do_anything_admins_up_to_their_own_role_and_only_below_it() {
        for role in Role::ALL {
            assert!(may_grant(Role::Owner, role).is_ok());
            assert!(may_manage(Role::Owner, role).is_ok());
            assert!(may_grant(Role::Editor, role).is_err());
            assert!(may_manage(Role::Viewer, role).is_err());
        }
        assert!(may_grant(Role::Admin, Role::Admin).is_ok());
        assert!(may_grant(Role::Admin, Role::Owner).is_err());
        assert!(may_manage(Role::Admin, Role::Editor).is_ok());
        assert!(may_manage(Role::Admin, Role::Viewer).is_ok());
        assert!(may_manage(Role::Admin, Role::Admin).is_err());
        assert!(may_manage(Role::Admin, Role::Owner).is_err());
    }

    #[test]
    fn the_last_owner_stays() {
        assert!(keeps_an_owner(Role::Owner, true, 1).is_err());
        assert!(keeps_an_owner(Role::Owner, true, 2).is_ok());
        assert!(keeps_an_owner(Role::Owner, false, 1).is_ok());
        assert!(keeps_an_owner(Role::Admin, true, 1).is_ok());
    }
}
