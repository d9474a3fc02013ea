/**
 * The catalogue templates a user bookmarked (user.getBookmarkedTemplates,
 * user.toggleTemplateBookmark): per user, as Dokploy keeps them, whatever the organization.
 */
import type { Db } from "../db/database.ts";

/** The user's bookmarked template ids, in the order they were bookmarked. */
export async function listBookmarkedTemplates(db: Db, userId: string): Promise<string[]> {
  const rows = await db
    .selectFrom("templateBookmarks")
    .select("templateId")
    .where("userId", "=", userId)
    .orderBy("createdAt", "asc")
    .orderBy("templateId", "asc")
    .execute();
  return rows.map((row) => row.templateId);
}

/** Removes the bookmark when there is one, else adds it; answers whether it is bookmarked now. */
export function toggleBookmark(db: Db, userId: string, templateId: string): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const removed = await trx
      .deleteFrom("templateBookmarks")
      .where("userId", "=", userId)
      .where("templateId", "=", templateId)
      .executeTakeFirst();
    if (Number(removed.numDeletedRows) > 0) return false;
    await trx
      .insertInto("templateBookmarks")
      .values({ userId, templateId })
      .onConflict((conflict) => conflict.columns(["userId", "templateId"]).doNothing())
      .execute();
    return true;
  });
}
